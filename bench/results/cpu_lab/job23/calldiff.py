import sys,collections,glob
src=open('/tmp/job23/classify.py').read().replace('\nmain()\n','\n')
ns={}; exec(compile(src,'c','exec'),ns)
want=sys.argv[1]; depth=int(sys.argv[2]) if len(sys.argv)>2 else 4
tot=collections.Counter()
for r in (1,2,3):
    for kind,sign in (('short',-1),('long',1)):
        for f in glob.glob(f'/tmp/job23/prof/r{r}.{kind}/perf.*'):
            for period,fr in ns['samples'](f):
                if ns['classify'](fr)==want:
                    u=[x.replace('github.com/gocoll/gocoll/','') for x in fr if not x.startswith('[k]') and not x.startswith('internal/runtime/syscall') and not x.startswith('syscall.')][:depth]
                    kl='sw' if any('finish_task_switch' in x or '__schedule' in x for x in fr) else 'nosw'
                    tot[kl+' | '+' < '.join(u)]+=sign*period/1e6/12/3
for k,v in tot.most_common(14): print(f"{v:6.2f} {k}")
