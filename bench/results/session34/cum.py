import re,sys,collections
calls=[];cur=None;last=-1
for line in open(sys.argv[1]):
    m=re.search(r't=\s*(\d+)ms(.*)$',line)
    if not m: continue
    t=int(m.group(1))
    if t<last or cur is None: cur=collections.OrderedDict(); calls.append(cur)
    last=t
    cur[t]=dict(((s+'>'+d),int(kb)) for s,d,kb in re.findall(r'(\d+)>(\d+):(\d+)',m.group(2)))
keys=['0>4','1>5','2>6','3>7','4>0','5>1','6>2','7>3']
for c in calls:
    cum=collections.Counter(); out=[]
    for t,row in c.items():
        for k,v in row.items(): cum[k]+=v
        if t%20==0: out.append("%3d: "%t+" ".join("%4d"%cum[k] for k in keys))
    print("\n".join(out)); print("--")
