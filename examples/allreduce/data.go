package main

import (
	"math"
	"math/rand/v2"
)

// The dataset: a noisy spiral of numClasses arms in the plane.
const (
	numFeatures = 2 // inputs per sample: the point's x and y
	numClasses  = 3 // spiral arms, one class each
	spiralTurns = 0.75
	angleNoise  = 0.25 // standard deviation of the angle, in radians
)

// PCG stream numbers, so that the data, the initial weights and the batch
// order drawn from one seed are independent of each other.
const (
	streamData  = 0x64617461 // "data"
	streamInit  = 0x696e6974 // "init"
	streamOrder = 0x6f726400 // "ord" (epoch number added)
)

// dataset is a labelled classification set held in memory: sample i has
// numFeatures inputs at inputs[i*numFeatures:] and class labels[i].
type dataset struct {
	inputs []float64
	labels []int
}

// makeSpiral returns samples points drawn from seed: each picks an arm c
// and a radius r uniform in [0, 1), and lies at angle
// 2πc/numClasses + 2π·spiralTurns·r + noise. The arms wind around each
// other, so no linear model separates them; the noise makes them overlap a
// little near the centre.
func makeSpiral(samples int, seed uint64) *dataset {
	rng := rand.New(rand.NewPCG(seed, streamData))
	d := &dataset{
		inputs: make([]float64, samples*numFeatures),
		labels: make([]int, samples),
	}
	for i := range samples {
		c := rng.IntN(numClasses)
		r := rng.Float64()
		angle := 2*math.Pi*float64(c)/numClasses + 2*math.Pi*spiralTurns*r + angleNoise*rng.NormFloat64()
		d.inputs[i*numFeatures] = r * math.Cos(angle)
		d.inputs[i*numFeatures+1] = r * math.Sin(angle)
		d.labels[i] = c
	}
	return d
}

// len is the number of samples.
func (d *dataset) len() int { return len(d.labels) }

// input returns sample i's features.
func (d *dataset) input(i int) []float64 {
	return d.inputs[i*numFeatures : (i+1)*numFeatures]
}

// shardSize is the number of training samples each of ranks ranks holds:
// samples/ranks, rounded down. Every shard has the same size so that every
// rank runs the same number of equal-sized batches (see the package doc);
// the samples%ranks samples at the end of the dataset are not trained on,
// by any rank or by the reference, but they are evaluated.
func shardSize(samples, ranks int) int { return samples / ranks }

// shardStart is the position of rank's first training sample: shard r is
// the samples [r*size, (r+1)*size).
func shardStart(rank, size int) int { return rank * size }

// evalRange is the part of the whole dataset that rank evaluates: the
// samples are cut into ranks near-equal contiguous ranges that cover all of
// them, the unused remainder included.
func evalRange(rank, ranks, samples int) (lo, hi int) {
	return rank * samples / ranks, (rank + 1) * samples / ranks
}
