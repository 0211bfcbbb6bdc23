import re,sys,glob,os
d=sys.argv[1]
for run in sorted(glob.glob(d+'/[AB].r*')):
    tot={'LAN':[0]*5,'WAN':[0]*5}
    for line in open(run+'/out'):
        if 'gocoll: path' not in line: continue
        m=dict(re.findall(r'(\w+)=(\S+)',line))
        r=int(m['rank']); p=int(m['peer'])
        k='LAN' if r//4==p//4 else 'WAN'
        for i,f in enumerate(['packets','resent','lost','timeouts','spurious']):
            tot[k][i]+=int(m.get(f,0))
    print(os.path.basename(run), ' '.join('%s pk %d resent %d lost %d to %d spur %d'%(k,*v) for k,v in tot.items()))
