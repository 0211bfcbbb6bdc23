import sys,re,glob
for run in sys.argv[1:]:
  T={}
  for l in open(run+'/out'):
    if 'mrtransport: engine' not in l: continue
    m=dict(re.findall(r'(\w+)=(\S+)',l))
    for k in ('datagramsWritten','writeBatches','tmpTxBatches','tmpTxSingles','tmpTxSingleAcks','data','acks'): T[k]=T.get(k,0)+int(m.get(k,0))
  print(run, T, 'sendmmsg/batch %.2f'%(T['writeBatches']/T['tmpTxBatches']), 'dgrams/sendmmsg %.2f'%(T['datagramsWritten']/T['writeBatches']), 'singles %.0f%% (acks %.0f%% of singles)'%(100*T['tmpTxSingles']/T['writeBatches'],100*T['tmpTxSingleAcks']/max(T['tmpTxSingles'],1)))
