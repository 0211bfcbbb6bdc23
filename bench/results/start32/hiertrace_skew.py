import sys,glob,re,statistics as st
exec(open('/tmp/start32_stats.py').read().split('res={}')[0])
for v in sys.argv[1:]:
    s1=[];s2=[];ends={0:[],1:[]};first_call=[];later=[]
    for d in sorted(glob.glob(f'/tmp/start32_tr_{v}_*')):
        calls=sorted(set(re.search(r'-c(\d+)-b16777216',f).group(1) for f in glob.glob(d+'/r0-c*-b16777216.txt')))
        for idx in (1,2,3,5,6,7):
            if idx>=len(calls): continue
            t0s,evs=load(glob.glob(f'{d}/r*-c{calls[idx]}-b16777216.txt'))
            base=min(t0s.values())
            a=st.mean((t0s[r]-base)/1e6 for r in range(4)); b=st.mean((t0s[r]-base)/1e6 for r in range(4,8))
            (first_call if idx in (1,5) else later).append(a-b)
            s1.append(a); s2.append(b)
            for r in evs:
                E=[e['t'] for e in evs[r] if e['ev']=='E'][0]; ends[r//4].append(E+(t0s[r]-base)/1e6)
    print(v, f"mean start offset site1 {st.mean(s1):.1f} site2 {st.mean(s2):.1f} ms; site1-site2 after a barrier {' '.join('%.0f'%x for x in first_call)} | back to back {' '.join('%.0f'%x for x in later)}")
