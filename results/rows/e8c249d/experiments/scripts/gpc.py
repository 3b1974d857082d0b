"""How many thread-block clusters the driver places at once (cuOccupancyMaxActiveClusters)
for clusters of 1 to 16 blocks, with one block an SM (1024 threads, 160 KiB of shared memory)
and with the lab's cluster launches (LayerNorm f32: 512 threads and 91,664 bytes, two an SM;
bf16: 256 and 45,840, four an SM). With one block an SM, clusters of k blocks place
sum(floor(g / k)) over the GPCs' SM counts g."""
import ctypes as C, gzip, sys

cu = C.CDLL("libcuda.so.1")
def ok(r, what):
    if r != 0:
        sys.exit(f"{what}: CUresult {r}")

class Attr(C.Structure):
    _fields_ = [("id", C.c_int), ("pad", C.c_int), ("x", C.c_uint), ("y", C.c_uint),
                ("z", C.c_uint), ("rest", C.c_char * 52)]
class Config(C.Structure):
    _fields_ = [("gx", C.c_uint), ("gy", C.c_uint), ("gz", C.c_uint), ("bx", C.c_uint),
                ("by", C.c_uint), ("bz", C.c_uint), ("smem", C.c_uint), ("stream", C.c_void_p),
                ("attrs", C.POINTER(Attr)), ("n", C.c_uint)]

ok(cu.cuInit(0), "cuInit")
dev = C.c_int(); ok(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
ctx = C.c_void_p(); ok(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "retain")
ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
sms = C.c_int(); ok(cu.cuDeviceGetAttribute(C.byref(sms), 16, dev), "SM count")
ptx = gzip.open(sys.argv[1]).read() + b"\0"
mod = C.c_void_p(); ok(cu.cuModuleLoadData(C.byref(mod), ptx), "cuModuleLoadData")
print(f"SMs: {sms.value}")
for name, threads, smem in [("softmax_cluster_f32", 1024, 160 * 1024),
                            ("layernorm_cluster_f32", 512, 91664),
                            ("layernorm_cluster_bf16", 256, 45840)]:
    f = C.c_void_p(); ok(cu.cuModuleGetFunction(C.byref(f), mod, name.encode()), name)
    ok(cu.cuFuncSetAttribute(f, 8, smem), "max dynamic shared")
    ok(cu.cuFuncSetAttribute(f, 14, 1), "non-portable clusters")
    for policy in (0, 2):
        row = []
        for k in range(1, 17):
            a = (Attr * 2)(Attr(id=4, x=k, y=1, z=1), Attr(id=5, x=policy))
            cfg = Config(gx=k, gy=1, gz=1, bx=threads, by=1, bz=1, smem=smem, stream=None,
                         attrs=C.cast(a, C.POINTER(Attr)), n=1 if policy == 0 else 2)
            n = C.c_int(); r = cu.cuOccupancyMaxActiveClusters(C.byref(n), f, C.byref(cfg))
            row.append(f"{k}:{n.value if r == 0 else 'err' + str(r)}")
        print(f"{name} ({threads} threads, {smem} B shared, policy {policy}): clusters at once "
              "by size: " + " ".join(row))
