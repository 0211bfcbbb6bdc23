import sys, collections
# parse perf script: blocks separated by blank lines; first line header, then frames (leaf first)
stacks=[]; cur=None
for line in open(sys.argv[1]):
    line=line.rstrip('\n')
    if not line.strip():
        if cur: stacks.append(cur); cur=None
        continue
    if not line.startswith('\t') and not line.startswith(' '):
        cur={'hdr':line,'fr':[]}
    else:
        parts=line.strip().split(None,1)
        if cur is not None and len(parts)==2: cur['fr'].append(parts[1])
if cur: stacks.append(cur)
root=sys.argv[2]
n=len(stacks); under=[s for s in stacks if any(root in f for f in s['fr'])]
print("total",n,"under",root,len(under), "%.1f%%"%(100*len(under)/n))
# inclusive counts of frames below root
inc=collections.Counter()
for s in under:
    fr=s['fr']
    idx=max(i for i,f in enumerate(fr) if root in f)
    seen=set()
    for f in fr[:idx]:
        if f not in seen: inc[f]+=1; seen.add(f)
for f,c in inc.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 50):
    print("%5.1f%% %s"%(100*c/n,f))
