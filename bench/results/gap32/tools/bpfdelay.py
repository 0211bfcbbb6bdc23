import ctypes,struct,sys,os
# bpfdelay.py PINPATH DELAY_NS: load a tc (SCHED_CLS) program that sets skb->tstamp = now + DELAY_NS (an EDT for fq) and pin it
libc=ctypes.CDLL(None,use_errno=True)
SYS_bpf=321
BPF_PROG_LOAD=5; BPF_OBJ_PIN=6; BPF_PROG_TYPE_SCHED_CLS=3
def insn(op,dst,src,off,imm): return struct.pack('<BBhi',op,(src<<4)|dst,off,imm)
delay=int(sys.argv[2])
prog=b''.join([
 insn(0xbf,6,1,0,0),        # r6 = r1
 insn(0x85,0,0,0,5),        # call bpf_ktime_get_ns
 insn(0x07,0,0,0,delay),    # r0 += delay
 insn(0x7b,6,0,152,0),      # *(u64 *)(r6 + tstamp) = r0
 insn(0xb7,0,0,0,0),        # r0 = TC_ACT_OK
 insn(0x95,0,0,0,0),        # exit
])
ibuf=ctypes.create_string_buffer(prog,len(prog)); lic=ctypes.create_string_buffer(b'GPL'); log=ctypes.create_string_buffer(65536)
attr=struct.pack('<IIQQIIQI',BPF_PROG_TYPE_SCHED_CLS,len(prog)//8,ctypes.addressof(ibuf),ctypes.addressof(lic),1,len(log),ctypes.addressof(log),0)
attr=attr+b'\0'*(128-len(attr)); ab=ctypes.create_string_buffer(attr,len(attr))
fd=libc.syscall(SYS_bpf,BPF_PROG_LOAD,ab,len(attr))
if fd<0: print('load failed',os.strerror(ctypes.get_errno()),log.value.decode()); sys.exit(1)
path=ctypes.create_string_buffer(sys.argv[1].encode())
pa=struct.pack('<QII',ctypes.addressof(path),fd,0); pb=ctypes.create_string_buffer(pa,len(pa))
r=libc.syscall(SYS_bpf,BPF_OBJ_PIN,pb,len(pa))
if r<0: print('pin failed',os.strerror(ctypes.get_errno())); sys.exit(1)
print('pinned',sys.argv[1])
