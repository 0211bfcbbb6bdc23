import json,glob,statistics as st
groups=[('quiet window 012307, main 2a64dbbe (load 1.1-7.7)','quiet-20261207-0106/model_sweep/raw/*.topo.json'),('s27 sweep_main 000642, 4df0f78 (load 10-36)','model27-20261207/sweep_main/raw/*.topo.json'),('s27 sweep_new 002814, e50333e branch (load 20-39)','model27-20261207/sweep_new/raw/*.topo.json'),('model28 step1, 880627ab (load 5-19)','model_lab/model28/step1/raw/*.topo.json'),('model28 spin_ab, 880627ab (load 13)','model_lab/model28/spin_ab/*.topo.json'),('model28 cpu_split, 880627ab (load 22-41)','model_lab/model28/cpu_split/*.topo.json')]
print('| runs | files | host lone / busy | site lone / busy | WAN lone / busy |\n|---|---|---|---|---|')
for g,p in groups:
    fs=glob.glob(p); row=[]
    for lv in ('host','site','wan'):
        lo=st.median([json.load(open(f))['levels'][lv]['cpu_per_byte']*1e9 for f in fs]); bu=st.median([json.load(open(f))['levels'][lv]['cpu_per_byte_busy']*1e9 for f in fs])
        row.append('%.2f / %.2f (x%.2f)'%(lo,bu,bu/lo))
    print('| %s | %d | %s |'%(g,len(fs),' | '.join(row)))
