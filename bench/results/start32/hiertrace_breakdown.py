import sys,glob,re,statistics as st
exec(open('/tmp/start32_stats.py').read().split('res={}')[0])
for v in sys.argv[1:]:
    cols={'hW':[],'hR':[],'lS':[],'lW':[],'lR':[],'wS':[]}
    for d in sorted(glob.glob(f'/tmp/start32_tr_{v}_*')):
        calls=sorted(set(re.search(r'-c(\d+)-b16777216',f).group(1) for f in glob.glob(d+'/r0-c*-b16777216.txt')))
        for c in [calls[i] for i in (1,2,3,5,6,7) if i < len(calls)]:
            t0s,evs=load(glob.glob(f'{d}/r*-c{c}-b16777216.txt'))
            for r in evs:
                def first(ev,lv):
                    for e in evs[r]:
                        if e['ev']!=ev or e['piece']!=0: continue
                        p=e['peer']; l='shm' if p//2==r//2 else ('lan' if p//4==r//4 else 'wan')
                        if l==lv: return e['t']
                cols['hW'].append(first('W','shm')); cols['hR'].append(first('R','shm'))
                cols['lS'].append(first('S','lan')); cols['lW'].append(first('W','lan')); cols['lR'].append(first('R','lan')); cols['wS'].append(first('S','wan'))
    print(v, ' '.join(f"{k} {st.median(x):.1f}" for k,x in cols.items()), '(medians, ms after the rank\'s start, piece 0)')
