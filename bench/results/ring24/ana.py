import re,sys
d=sys.argv[1]
routes={}
for l in open(d+'/routes.txt'):
    r,sp,dp,link=l.split()
    routes[(r,sp,dp)]=link
pat=re.compile(r'^\[rank (\d)\] time=\S+T(\S+)Z .*msg="R24 scores" rank=\d ports=(\S+) peer=(\d) early=(\w+) on=(\w+) pend=(\w+) next=(-?\d+) sc=(\[[^\]]*\]) sentKB="(\[[^\]]*\])" recvPk="(\[[^\]]*\])"')
want={('0','7'),('3','4')}
for l in open(d+'/out.txt'):
    if 'R24' not in l:
        m2=re.match(r'^\[rank ([03])\] time=\S+T(\S+)Z .*msg="mrtransport: (path on the most crowded link|path port re-pick|paths behave)[^"]*"(.*)',l)
        if m2: print('  ',m2.group(1),m2.group(2),m2.group(3),m2.group(4)[:120])
        continue
    m=pat.match(l)
    if not m: continue
    r,t,ports,peer=m.group(1),m.group(2),m.group(3),m.group(4)
    if (r,peer) not in want: continue
    links=[routes.get((r,)+tuple(pp.split('>')),'?') for pp in ports.strip(',').split(',')]
    cnt=[links.count(str(k)) for k in range(1,5)]
    print(r,t,''.join(links),cnt,'E' if m.group(5)=='true' else 'S','on' if m.group(6)=='true' else '  ','pend' if m.group(7)=='true' else '    ',m.group(8),m.group(9),'sent',m.group(10),'recv',m.group(11))
