import ctypes,os,sys,struct,time
# slice.py US PID...: set the EEVDF custom slice (sched_attr.sched_runtime) of every thread of each PID (SCHED_OTHER, nice kept); -1 PID to read
libc=ctypes.CDLL(None,use_errno=True)
SYS_sched_setattr=314; SYS_sched_getattr=315
class Attr(ctypes.Structure):
    _fields_=[('size',ctypes.c_uint32),('policy',ctypes.c_uint32),('flags',ctypes.c_uint64),('nice',ctypes.c_int32),('prio',ctypes.c_uint32),('runtime',ctypes.c_uint64),('deadline',ctypes.c_uint64),('period',ctypes.c_uint64),('umin',ctypes.c_uint32),('umax',ctypes.c_uint32)]
def get(tid):
    a=Attr(); r=libc.syscall(SYS_sched_getattr,tid,ctypes.byref(a),ctypes.sizeof(a),0)
    if r: raise OSError(ctypes.get_errno(),'getattr')
    return a
def set_slice(tid,ns):
    a=get(tid)
    if a.policy!=0: return False
    b=Attr(size=ctypes.sizeof(Attr),policy=0,flags=0,nice=a.nice,runtime=ns)
    r=libc.syscall(SYS_sched_setattr,tid,ctypes.byref(b),0)
    if r: raise OSError(ctypes.get_errno(),'setattr %d'%tid)
    return True
us=int(sys.argv[1])
if us<0:
    for p in sys.argv[2:]:
        for t in os.listdir('/proc/%s/task'%p): a=get(int(t)); print(p,t,'policy',a.policy,'nice',a.nice,'runtime',a.runtime)
    sys.exit()
for p in sys.argv[2:]:
    for t in os.listdir('/proc/%s/task'%p):
        try: set_slice(int(t),us*1000)
        except OSError as e: print(e,file=sys.stderr)
