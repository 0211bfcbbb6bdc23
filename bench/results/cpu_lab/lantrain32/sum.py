import re,sys,ast
rows={}
for line in open(sys.argv[1]):
    m=re.match(r'(\w)\.r(\d+)\s+load ([\d.]+) ([\d.]+) time_us (\(.*?\)) busbw (\(.*?\)) cpu_s ([\d.]+) delayd_s ([\d.]+) (\{.*\})',line)
    if not m: continue
    x,r=m.group(1),int(m.group(2))
    rows.setdefault(x,{})[r]=dict(t=ast.literal_eval(m.group(5)),bw=ast.literal_eval(m.group(6)),cpu=float(m.group(7)),dd=float(m.group(8)),c=ast.literal_eval(m.group(9)))
for x in sorted(rows):
    R=rows[x]
    s=lambda f: sum(f(v) for v in R.values())
    print(x,'runs',len(R),'writeBatches %.0fk'%(s(lambda v:v['c']['writeBatches'])/1e3),'written %.0fk'%(s(lambda v:v['c']['datagramsWritten'])/1e3),
      'cpu %.1f'%s(lambda v:v['cpu']),'delayd %.2f'%s(lambda v:v['dd']),'rank0 ms oop %.0f ip %.0f'%(s(lambda v:int(v['t'][0]))/1e3,s(lambda v:int(v['t'][1]))/1e3),
      'readBatches %.0fk'%(s(lambda v:v['c']['readBatches'])/1e3),'timerRuns %.0fk'%(s(lambda v:v['c']['timerRuns'])/1e3),'acks %.0fk'%(s(lambda v:v['c']['acks'])/1e3),
      'busbw oop',sorted(float(v['bw'][0]) for v in R.values()),'ip',sorted(float(v['bw'][1]) for v in R.values()))
a,b=rows.get('A',{}),rows.get('B',{})
print('pairs B cpu lower:',sum(b[r]['cpu']<a[r]['cpu'] for r in a if r in b),'of',len(a))
