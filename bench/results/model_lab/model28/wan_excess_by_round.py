# wan_excess_by_round.py (run from bench/results): per probed file of this machine, the WAN contended round's aggregate, the lone figure, and the CPU a byte lone / busy / excess (and the site's), sorted by the round's rate.
import json,sys,re,glob,os
rows=[]
for t in glob.glob('quiet-20261207-0106/model_sweep/raw/*.topo.json')+glob.glob('model27-20261207/*/raw/*.topo.json')+glob.glob('model_lab/model28/*/raw/*.topo.json')+glob.glob('model_lab/model28/spin_ab/*.topo.json'):
    txt=t.replace('.topo.json','.txt')
    if not os.path.exists(txt): continue
    s=open(txt,errors='replace').read()
    m=re.search(r'\[rank 0\].*probe bandwidth.* level=wan lone=(\S+) spread=(\S+) contended=(\S+)',s)
    ms=re.search(r'\[rank 0\].*probe bandwidth.* level=site lone=(\S+) spread=(\S+) contended=(\S+)',s)
    ld=re.search(r'load (?:before)?:? ?([0-9.]+)',s)
    if not m: continue
    d=json.load(open(t))['levels']
    w=d['wan']; si=d['site']
    rows.append((float(m.group(3))/1e6,float(m.group(1))/1e6,w['cpu_per_byte']*1e9,w['cpu_per_byte_busy']*1e9,float(ms.group(3))/1e6 if ms else 0,si['cpu_per_byte']*1e9,si['cpu_per_byte_busy']*1e9,t.split('/')[-1][:40]))
rows.sort()
for r in rows: print("wan round %5.1f lone %5.1f cpu %.2f busy %.2f ex %.2f | site round %6.1f cpu %.2f busy %.2f ex %.2f  %s"%(r[0],r[1],r[2],r[3],r[3]-r[2],r[4],r[5],r[6],r[6]-r[5],r[7]))
