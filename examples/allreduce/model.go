package main

import (
	"math"
	"math/rand/v2"
)

// mlp is the shape of a two-layer perceptron: in inputs, one hidden layer of
// hidden tanh units, and out class scores turned into probabilities by a
// softmax and scored by cross-entropy.
//
// Its parameters live in one flat slice, laid out as
//
//	W1 (hidden×in, row-major) | b1 (hidden) | W2 (out×hidden, row-major) | b2 (out)
//
// so the gradient is one buffer of the same layout, reduced by one AllReduce
// per step.
//
// tanh rather than ReLU: it is smooth, so the finite-difference test of the
// gradient has no kinks to trip over.
type mlp struct {
	in, hidden, out int
}

// numParams is the length of the flat parameter (and gradient) slice.
func (m mlp) numParams() int {
	return m.hidden*m.in + m.hidden + m.out*m.hidden + m.out
}

// layers cuts a flat parameter or gradient slice into its four tensors.
func (m mlp) layers(p []float64) (w1, b1, w2, b2 []float64) {
	if len(p) != m.numParams() {
		panic("mlp: parameter slice of the wrong length")
	}
	n1 := m.hidden * m.in
	n2 := n1 + m.hidden
	n3 := n2 + m.out*m.hidden
	return p[:n1], p[n1:n2], p[n2:n3], p[n3:]
}

// initParams returns parameters drawn from seed: weights uniform in
// ±sqrt(3/fanIn) (variance 1/fanIn), biases zero.
func (m mlp) initParams(seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, streamInit))
	p := make([]float64, m.numParams())
	w1, _, w2, _ := m.layers(p)
	fill := func(w []float64, fanIn int) {
		limit := math.Sqrt(3 / float64(fanIn))
		for i := range w {
			w[i] = (2*rng.Float64() - 1) * limit
		}
	}
	fill(w1, m.in)
	fill(w2, m.hidden)
	return p
}

// workspace holds one forward/backward pass's activations, so that a pass
// allocates nothing. One per goroutine.
type workspace struct {
	hidden, dHidden, scores []float64
}

func (m mlp) newWorkspace() *workspace {
	return &workspace{
		hidden:  make([]float64, m.hidden),
		dHidden: make([]float64, m.hidden),
		scores:  make([]float64, m.out),
	}
}

// forward computes the hidden activations and the class probabilities of
// input x into ws (ws.scores holds the softmax), and returns the
// cross-entropy loss for label y and whether the most probable class is y.
func (m mlp) forward(p, x []float64, y int, ws *workspace) (loss float64, correct bool) {
	w1, b1, w2, b2 := m.layers(p)
	for j := range m.hidden {
		a := b1[j]
		for k, xk := range x {
			a += w1[j*m.in+k] * xk
		}
		ws.hidden[j] = math.Tanh(a)
	}
	best := 0
	for c := range m.out {
		z := b2[c]
		for j, h := range ws.hidden {
			z += w2[c*m.hidden+j] * h
		}
		ws.scores[c] = z
		if z > ws.scores[best] {
			best = c
		}
	}
	// Softmax, shifted by the largest score so that exp cannot overflow;
	// the loss -log p_y = log(sum) - (z_y - top) never takes the log of a
	// probability that rounded to zero.
	top, sum := ws.scores[best], 0.0
	shiftedY := ws.scores[y] - top
	for c, z := range ws.scores {
		ws.scores[c] = math.Exp(z - top)
		sum += ws.scores[c]
	}
	for c := range ws.scores {
		ws.scores[c] /= sum
	}
	return math.Log(sum) - shiftedY, best == y
}

// accumulate runs forward and backward for one sample (x, y) and adds its
// loss gradient to grad (same layout as p). It returns the sample's loss.
func (m mlp) accumulate(p, x []float64, y int, grad []float64, ws *workspace) float64 {
	loss, _ := m.forward(p, x, y, ws)
	_, _, w2, _ := m.layers(p)
	gw1, gb1, gw2, gb2 := m.layers(grad)
	// d loss / d z_c = p_c - [c == y]; ws.scores becomes that.
	ws.scores[y]--
	clear(ws.dHidden)
	for c, dz := range ws.scores {
		gb2[c] += dz
		row := w2[c*m.hidden : (c+1)*m.hidden]
		grow := gw2[c*m.hidden : (c+1)*m.hidden]
		for j, h := range ws.hidden {
			grow[j] += dz * h
			ws.dHidden[j] += dz * row[j]
		}
	}
	for j, h := range ws.hidden {
		da := ws.dHidden[j] * (1 - h*h) // tanh' = 1 - tanh²
		gb1[j] += da
		grow := gw1[j*m.in : (j+1)*m.in]
		for k, xk := range x {
			grow[k] += da * xk
		}
	}
	return loss
}

// gradient sets grad to the mean loss gradient over the samples of d at
// positions idx, and returns their mean loss. An empty idx gives zeros.
func (m mlp) gradient(p []float64, d *dataset, idx []int, grad []float64, ws *workspace) float64 {
	clear(grad)
	if len(idx) == 0 {
		return 0
	}
	total := 0.0
	for _, i := range idx {
		total += m.accumulate(p, d.input(i), d.labels[i], grad, ws)
	}
	scale := 1 / float64(len(idx))
	for i := range grad {
		grad[i] *= scale
	}
	return total * scale
}

// evaluate returns the summed loss and the number of correctly classified
// samples over the samples [lo, hi) of d.
func (m mlp) evaluate(p []float64, d *dataset, lo, hi int, ws *workspace) (lossSum, correct float64) {
	for i := lo; i < hi; i++ {
		loss, ok := m.forward(p, d.input(i), d.labels[i], ws)
		lossSum += loss
		if ok {
			correct++
		}
	}
	return lossSum, correct
}
