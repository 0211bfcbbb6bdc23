package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gocoll/gocoll/ddp"
)

// mlp is the shape of a multi-layer perceptron: sizes[0] inputs, hidden
// layers of tanh units, sizes[len-1] class scores turned into probabilities
// by a softmax and scored by cross-entropy. Layer l maps sizes[l] values to
// sizes[l+1] with a weight matrix W_l (sizes[l+1]×sizes[l], row-major) and
// a bias b_l. tanh rather than ReLU: it is smooth, so the finite-difference
// test of the gradient has no kinks to trip over.
//
// The parameters are the tensors W_0, b_0, W_1, b_1, ...: parameter 2l is
// W_l and 2l+1 is b_l, the order of the forward pass, which ddp registers.
type mlp struct {
	sizes []int
}

// newMLP is the model of cfg.
func newMLP(cfg config) mlp {
	sizes := []int{numFeatures}
	for range cfg.depth {
		sizes = append(sizes, cfg.width)
	}
	return mlp{sizes: append(sizes, numClasses)}
}

// layers is the number of weight matrices.
func (m mlp) layers() int { return len(m.sizes) - 1 }

// numParams is the number of weights and biases.
func (m mlp) numParams() int {
	n := 0
	for l := range m.layers() {
		n += m.sizes[l+1]*m.sizes[l] + m.sizes[l+1]
	}
	return n
}

// String is the shape, as 32-512-512-10.
func (m mlp) String() string {
	s := ""
	for i, n := range m.sizes {
		if i > 0 {
			s += "-"
		}
		s += fmt.Sprint(n)
	}
	return s
}

// initParams returns the parameters drawn from seed: weights uniform in
// ±sqrt(3/fanIn) (variance 1/fanIn), biases zero.
func (m mlp) initParams(seed uint64) []ddp.Param {
	rng := rand.New(rand.NewPCG(seed, streamInit))
	ps := make([]ddp.Param, 0, 2*m.layers())
	for l := range m.layers() {
		in, out := m.sizes[l], m.sizes[l+1]
		w := make([]float32, out*in)
		limit := math.Sqrt(3 / float64(in))
		for i := range w {
			w[i] = float32((2*rng.Float64() - 1) * limit)
		}
		ps = append(ps,
			ddp.Param{Name: fmt.Sprintf("W%d", l), Shape: []int{out, in}, Data: w},
			ddp.Param{Name: fmt.Sprintf("b%d", l), Shape: []int{out}, Data: make([]float32, out)})
	}
	return ps
}

// workspace holds one batch's activations and their gradients, so a pass
// allocates nothing once it has seen its largest batch. One per goroutine.
type workspace struct {
	acts [][]float32 // acts[l]: the batch's inputs to layer l (acts[0]: the samples)
	dz   [][]float32 // dz[l]: d loss / d (layer l's output before tanh)
}

func (m mlp) newWorkspace() *workspace {
	return &workspace{acts: make([][]float32, len(m.sizes)), dz: make([][]float32, len(m.sizes))}
}

// grow makes ws hold batches of n samples.
func (ws *workspace) grow(m mlp, n int) {
	for l, size := range m.sizes {
		if cap(ws.acts[l]) < n*size {
			ws.acts[l] = make([]float32, n*size)
			ws.dz[l] = make([]float32, n*size)
		}
		ws.acts[l] = ws.acts[l][:n*size]
		ws.dz[l] = ws.dz[l][:n*size]
	}
}

// forward runs the batch of n samples x (n×sizes[0]) through the network:
// ws.acts[len-1] holds the softmax probabilities. It returns the summed
// cross-entropy loss for labels and the number of correct predictions.
func (m mlp) forward(ps []ddp.Param, x []float32, labels []int, ws *workspace) (loss float64, correct int) {
	n := len(labels)
	ws.grow(m, n)
	copy(ws.acts[0], x)
	last := m.layers() - 1
	for l := range m.layers() {
		in, out := m.sizes[l], m.sizes[l+1]
		w, b := ps[2*l].Data, ps[2*l+1].Data
		for s := range n {
			a := ws.acts[l][s*in : (s+1)*in]
			z := ws.acts[l+1][s*out : (s+1)*out]
			for o := range out {
				v := b[o] + dot(w[o*in:(o+1)*in], a)
				if l < last {
					v = float32(math.Tanh(float64(v)))
				}
				z[o] = v
			}
		}
	}
	out := m.sizes[len(m.sizes)-1]
	for s, y := range labels {
		p := ws.acts[len(m.sizes)-1][s*out : (s+1)*out]
		loss += softmax(p, y)
		best := 0
		for c := range p {
			if p[c] > p[best] {
				best = c
			}
		}
		if best == y {
			correct++
		}
	}
	return loss, correct
}

// softmax turns scores p into probabilities in place and returns -log p[y].
// Shifted by the largest score, exp cannot overflow, and the loss never
// takes the log of a probability that rounded to zero.
func softmax(p []float32, y int) float64 {
	top := p[0]
	for _, v := range p {
		top = max(top, v)
	}
	sum := 0.0
	shiftedY := float64(p[y] - top)
	for c, v := range p {
		e := math.Exp(float64(v - top))
		p[c] = float32(e)
		sum += e
	}
	for c := range p {
		p[c] = float32(float64(p[c]) / sum)
	}
	return math.Log(sum) - shiftedY
}

// backward adds to grads (one slice per parameter, zero before the first
// batch) the gradient of the summed loss of the batch forward last ran,
// last layer first, and calls ready(i) once parameter i's gradient is
// complete, as ddp.Model.Ready wants. It reads ps but not grads, so grads
// already handed to ready may be in flight.
func (m mlp) backward(ps []ddp.Param, labels []int, grads func(i int) []float32, ready func(i int) error, ws *workspace) error {
	n := len(labels)
	L := m.layers()
	out := m.sizes[L]
	dz := ws.dz[L]
	copy(dz, ws.acts[L])
	for s, y := range labels { // d loss / d score = p - onehot(y)
		dz[s*out+y]--
	}
	for l := L - 1; l >= 0; l-- {
		in, out := m.sizes[l], m.sizes[l+1]
		gw, gb := grads(2*l), grads(2*l+1)
		dz, a := ws.dz[l+1], ws.acts[l]
		for s := range n {
			dzs, as := dz[s*out:(s+1)*out], a[s*in:(s+1)*in]
			for o, d := range dzs {
				axpy(gw[o*in:(o+1)*in], d, as)
				gb[o] += d
			}
		}
		if err := ready(2 * l); err != nil {
			return err
		}
		if err := ready(2*l + 1); err != nil {
			return err
		}
		if l == 0 {
			break
		}
		// d loss / d a_l = dz W_l, then through tanh: a = tanh(z), tanh' = 1 - a².
		w, da := ps[2*l].Data, ws.dz[l]
		clear(da)
		for s := range n {
			das := da[s*in : (s+1)*in]
			for o, d := range dz[s*out : (s+1)*out] {
				axpy(das, d, w[o*in:(o+1)*in])
			}
			for i, av := range a[s*in : (s+1)*in] {
				das[i] *= 1 - av*av
			}
		}
	}
	return nil
}

// dot is the dot product of a and b (len(b) >= len(a)), four sums at once.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy adds alpha·x to y (len(x) >= len(y)).
func axpy(y []float32, alpha float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += alpha * x[i]
		y[i+1] += alpha * x[i+1]
		y[i+2] += alpha * x[i+2]
		y[i+3] += alpha * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += alpha * x[i]
	}
}
