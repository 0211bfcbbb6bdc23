import sys,glob,re,statistics as st
sys.path.insert(0,'/tmp')
def load(files):
    t0s={};evs={}
    for f in files:
        lines=open(f).read().split('\n')
        m=re.match(r'# rank (\d+) call \d+ bytes (\d+) t0 (\d+)',lines[0])
        r=int(m.group(1)); t0s[r]=int(m.group(3)); evs[r]=[]
        for l in lines[1:]:
            if not l: continue
            p=l.split(); dd={k:int(v) for k,v in (x.split('=') for x in p[2:])}
            dd['t']=float(p[0]); dd['ev']=p[1]; evs[r].append(dd)
    return t0s,evs
res={}
for v in sys.argv[1:]:
    own=[];dirs={0:[],1:[]};skew=[];own_site={0:[],1:[]};lanwait=[];pieces=set();dur=[]
    for d in sorted(glob.glob(f'/tmp/start32_tr_{v}_*')):
        calls=sorted(set(re.search(r'-c(\d+)-b16777216',f).group(1) for f in glob.glob(d+'/r0-c*-b16777216.txt')))
        timed=[calls[i] for i in (1,2,3,5,6,7) if i < len(calls)]
        for c in timed:
            t0s,evs=load(glob.glob(f'{d}/r*-c{c}-b16777216.txt'))
            if len(t0s)<8: continue
            base=min(t0s.values())
            skew.append((max(t0s.values())-base)/1e6)
            ends=[]
            for r in evs:
                off=(t0s[r]-base)/1e6
                fw=[e['t'] for e in evs[r] if e['ev']=='S' and e['peer']//4!=r//4]
                fl=[e['t'] for e in evs[r] if e['ev']=='S' and e['peer']//4==r//4 and e['peer']//2!=r//2]
                lr=[e['t'] for e in evs[r] if e['ev']=='W' and e['peer']//4==r//4 and e['peer']//2!=r//2]
                pieces.add(max(e['piece'] for e in evs[r])+1)
                own.append(fw[0]); own_site[r//4].append(fw[0])
                dirs[r//4].append((c,d,fw[0]+off))
                E=[e['t'] for e in evs[r] if e['ev']=='E'][0]; ends.append(E+off)
            dur.append(max(ends))
    per=[]
    for s in (0,1):
        bycall={}
        for c,d,t in dirs[s]: bycall.setdefault((d,c),[]).append(t)
        per.append([min(x) for x in bycall.values()])
    print(f"{v}: calls {len(skew)} pieces {sorted(pieces)} | rank start->own first WAN send: median {st.median(own):.1f} ms, mean {st.mean(own):.1f}, max {max(own):.1f} (site1 med {st.median(own_site[0]):.1f}, site2 {st.median(own_site[1]):.1f})")
    print(f"   call start -> first WAN send s1->s2: median {st.median(per[0]):.1f} mean {st.mean(per[0]):.1f} | s2->s1: median {st.median(per[1]):.1f} mean {st.mean(per[1]):.1f} | start skew median {st.median(skew):.1f} | call (first start->last end) median {st.median(dur):.1f} mean {st.mean(dur):.1f}")
