package collective_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
)

// BenchmarkHierLabCPU runs the hierarchical AllReduce, ReduceScatter and
// AllGather (size: the whole buffer) of
// the two-site lab's grid (2 sites x 2 hosts x 2 ranks, as goroutines over
// the in-process transport, which copies every message once), out of
// place and in place, and reports the process's CPU per call (cpu-ns/op,
// every rank together): the figure to compare on a loaded machine, where
// wall time is noise. Out of place, the AllReduce used to copy send to
// recv on every rank before the first message moved, the ReduceScatter
// to pack send whole into a scratch buffer, and the AllGather to copy its
// scratch buffer back whole at the end.
func BenchmarkHierLabCPU(b *testing.B) {
	hostOf := []int{0, 0, 1, 1, 2, 2, 3, 3}
	tp := placedTopology(b, hostOf, func(h int) string { return []string{"e", "e", "w", "w"}[h] })
	n := len(hostOf)
	for _, coll := range []string{"allreduce", "reducescatter", "allgather"} {
		for _, size := range []int{4 << 20, 16 << 20} {
			for _, inPlace := range []bool{false, true} {
				place := "out-of-place"
				if inPlace {
					place = "in-place"
				}
				b.Run(fmt.Sprintf("%s/%dMiB/%s", coll, size>>20, place), func(b *testing.B) {
					eps := inprocWorld(b, n)
					comms := make([]*collective.Comm, n)
					sends, recvs := make([][]float32, n), make([][]float32, n)
					for r, ep := range eps {
						c, err := collective.New(ep, 1, collective.Config{AllReduce: collective.AlgoHierarchical,
							ReduceScatter: collective.AlgoHierarchical, AllGather: collective.AlgoHierarchical, Topology: tp})
						if err != nil {
							b.Fatal(err)
						}
						comms[r] = c
						sends[r] = make([]float32, size/4)
						switch {
						case coll == "allreduce" && inPlace:
							recvs[r] = sends[r]
						case coll == "allreduce":
							recvs[r] = make([]float32, size/4)
						case coll == "reducescatter" && inPlace: // this rank's block of send
							recvs[r] = sends[r][r*size/4/n : (r+1)*size/4/n]
						case coll == "reducescatter":
							recvs[r] = make([]float32, size/4/n)
						case inPlace: // send is this rank's block of recv
							recvs[r], sends[r] = sends[r], sends[r][r*size/4/n:(r+1)*size/4/n]
						default:
							recvs[r], sends[r] = sends[r], make([]float32, size/4/n)
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					defer cancel()
					run := func(calls int) {
						var wg sync.WaitGroup
						for r, c := range comms {
							wg.Go(func() {
								for range calls {
									var err error
									switch coll {
									case "allreduce":
										err = collective.AllReduce(ctx, c, sends[r], recvs[r], collective.Sum)
									case "reducescatter":
										err = collective.ReduceScatter(ctx, c, sends[r], recvs[r], collective.Sum)
									default:
										err = collective.AllGather(ctx, c, sends[r], recvs[r])
									}
									if err != nil {
										b.Error(err)
										return
									}
								}
							})
						}
						wg.Wait()
					}
					cpu := collectivetest.CPUTime
					run(2)
					c0 := cpu()
					b.ResetTimer()
					run(b.N)
					b.StopTimer()
					b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
