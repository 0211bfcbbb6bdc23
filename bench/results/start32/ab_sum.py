import sys,statistics as st
rows=[l.split() for l in open(sys.argv[1])]
for size in ('16777216','67108864'):
    for v in ('main','a','b'):
        o=[int(r[2])/1000 for r in rows if r[0]==v and r[1]==size]
        i=[int(r[3])/1000 for r in rows if r[0]==v and r[1]==size]
        if not o: continue
        print(f"{size} {v:4s} n={len(o)} oop med {st.median(o):7.1f} min {min(o):7.1f} | inpl med {st.median(i):7.1f} min {min(i):7.1f} | all med {st.median(o+i):7.1f}  oop {' '.join('%.0f'%x for x in o)} | inpl {' '.join('%.0f'%x for x in i)}")
