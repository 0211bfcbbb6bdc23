import re,sys,glob,os
names=['ok','nofab','slowst','ecn','loss','compete','noroom','long']
for run in sys.argv[1:]:
    tot={'LAN':[[0]*8,[0]*8],'WAN':[[0]*8,[0]*8]}
    for line in open(run+'/out'):
        if 'gocoll: path' not in line: continue
        m=dict(re.findall(r'(\w+)=(\S+)',line))
        t=re.search(r'tmp="\[([\d ]+)\] \[([\d ]+)\]"',line)
        if not t: continue
        r=int(m['rank']); p=int(m['peer'])
        k='LAN' if r//4==p//4 else 'WAN'
        for j in (0,1):
            for i,v in enumerate(t.group(j+1).split()): tot[k][j][i]+=int(v)
    for k in ('LAN','WAN'):
        d,s=tot[k]; D=sum(d) or 1; S=sum(s) or 1
        print(os.path.basename(run),k,'DATA',sum(d),' '.join('%s %.1f%%'%(n,100*x/D) for n,x in zip(names,d)),'| starts',sum(s),'DATA/start %.2f'%(sum(d)/S),' '.join('%s %d'%(n,x) for n,x in zip(names,s)))
