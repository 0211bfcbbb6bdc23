package main

import (
	"math/rand/v2"
)

// The dataset: points in numFeatures dimensions, labelled by a random
// "teacher" network the model has to learn.
const (
	numFeatures  = 32
	numClasses   = 10
	teacherNoise = 0.5 // standard deviation of the noise on the teacher's scores
)

// PCG stream numbers, so that the data, the initial weights and the batch
// order drawn from one seed are independent of each other.
const (
	streamData  = 0x64617461 // "data"
	streamInit  = 0x696e6974 // "init"
	streamOrder = 0x6f726400 // "ord" (epoch and rank added)
)

// dataset is a labelled classification set held in memory: sample i has
// numFeatures inputs at inputs[i*numFeatures:] and class labels[i].
type dataset struct {
	inputs []float32
	labels []int
}

// makeData returns samples points drawn from seed: normal inputs, and as
// label the class a fixed random linear teacher scores highest, with noise.
// Every rank draws the same dataset from the seed (a real job would read
// its shard).
func makeData(samples int, seed uint64) *dataset {
	rng := rand.New(rand.NewPCG(seed, streamData))
	teacher := make([]float32, numClasses*numFeatures)
	for i := range teacher {
		teacher[i] = float32(rng.NormFloat64())
	}
	d := &dataset{inputs: make([]float32, samples*numFeatures), labels: make([]int, samples)}
	for i := range samples {
		x := d.inputs[i*numFeatures : (i+1)*numFeatures]
		for k := range x {
			x[k] = float32(rng.NormFloat64())
		}
		best, bestScore := 0, float32(0)
		for c := range numClasses {
			score := dot(teacher[c*numFeatures:(c+1)*numFeatures], x) + float32(teacherNoise*rng.NormFloat64())
			if c == 0 || score > bestScore {
				best, bestScore = c, score
			}
		}
		d.labels[i] = best
	}
	return d
}

// len is the number of samples.
func (d *dataset) len() int { return len(d.labels) }

// gather copies the samples at positions idx into x and y (reused).
func (d *dataset) gather(idx []int, x []float32, y []int) ([]float32, []int) {
	x, y = x[:0], y[:0]
	for _, i := range idx {
		x = append(x, d.inputs[i*numFeatures:(i+1)*numFeatures]...)
		y = append(y, d.labels[i])
	}
	return x, y
}

// shard is the part of the dataset rank trains on: the samples are cut
// into ranks contiguous ranges that differ in size by one at most, so with
// samples not a multiple of ranks some ranks have one sample more, and may
// have one batch more per epoch (see ddp.Model.Join).
func shard(rank, ranks, samples int) (lo, hi int) {
	return rank * samples / ranks, (rank + 1) * samples / ranks
}

// plan is the batches of one epoch, rank by rank: plan[r][s] lists the
// dataset positions of rank r's step s. Every rank visits its shard in an
// order drawn from the seed, the epoch and the rank, so every rank (and
// the single-process reference) computes the same plan.
func epochPlan(seed uint64, epoch, ranks, samples, batch int) [][][]int {
	plan := make([][][]int, ranks)
	for r := range ranks {
		lo, hi := shard(r, ranks, samples)
		rng := rand.New(rand.NewPCG(seed, streamOrder+uint64(epoch)<<16+uint64(r)))
		order := rng.Perm(hi - lo)
		for s := 0; s < len(order); s += batch {
			idx := make([]int, 0, batch)
			for _, p := range order[s:min(s+batch, len(order))] {
				idx = append(idx, lo+p)
			}
			plan[r] = append(plan[r], idx)
		}
	}
	return plan
}
