package ddp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
)

// Defaults and limits of Config.
const (
	DefaultBucketBytes      = 25 << 20 // PyTorch DDP's bucket_cap_mb
	DefaultFirstBucketBytes = 1 << 20  // PyTorch DDP's first bucket
	MinBucketBytes          = 4        // one float32
	MaxBucketBytes          = 1 << 30
	// MaxParams bounds the number of parameters New registers.
	MaxParams = 1 << 20
)

// Config adjusts a Model. The zero value is PyTorch DDP's behaviour.
type Config struct {
	// BucketBytes is the float32 gradient bytes at which a bucket is
	// closed: parameters join a bucket until it holds this much or more
	// (so its last parameter may take it over). Default
	// DefaultBucketBytes; [MinBucketBytes, MaxBucketBytes].
	BucketBytes int
	// FirstBucketBytes is the limit of the first bucket, the last layers'
	// gradients, which backward produces first. Default
	// DefaultFirstBucketBytes, at most BucketBytes; [MinBucketBytes,
	// BucketBytes].
	FirstBucketBytes int
	// BF16 sends the gradients as bfloat16; the buffers and the weights
	// stay float32.
	BF16 bool
}

// withDefaults fills the zero fields and checks the ranges.
func (c Config) withDefaults() (Config, error) {
	if c.BucketBytes == 0 {
		c.BucketBytes = DefaultBucketBytes
	}
	if c.BucketBytes < MinBucketBytes || c.BucketBytes > MaxBucketBytes {
		return c, fmt.Errorf("ddp: Config.BucketBytes %d out of range [%d, %d]", c.BucketBytes, MinBucketBytes, MaxBucketBytes)
	}
	if c.FirstBucketBytes == 0 {
		c.FirstBucketBytes = min(DefaultFirstBucketBytes, c.BucketBytes)
	}
	if c.FirstBucketBytes < MinBucketBytes || c.FirstBucketBytes > c.BucketBytes {
		return c, fmt.Errorf("ddp: Config.FirstBucketBytes %d out of range [%d, BucketBytes %d]", c.FirstBucketBytes, MinBucketBytes, c.BucketBytes)
	}
	return c, nil
}

// Param is one parameter tensor of the model.
type Param struct {
	Name  string    // for errors
	Shape []int     // its dimensions, whose product is len(Data); nil means [len(Data)]
	Data  []float32 // the weights, at least one; New sets them to rank 0's
}

// Model is one rank's replica of a model under data-parallel training:
// its parameters, their gradient buckets and the state of the current step.
type Model struct {
	comm    *collective.Comm
	cfg     Config
	params  []Param
	grads   [][]float32 // grads[i]: parameter i's gradient, a view of its bucket
	bucket  []int       // bucket[i]: the bucket of parameter i
	buckets []*bucket

	mu     sync.Mutex
	step   step
	noSync int   // NoSync depth
	broken error // set when a Wait gave up with operations in flight
	stats  Stats
}

// bucket is a flat gradient buffer and its state in the current step.
type bucket struct {
	params  []int // parameter indices, in fill order
	grad    []float32
	wire    []dtype.BFloat16 // Config.BF16: what travels
	pending int              // parameters not yet ready this step
	op      *inflight
}

// New registers params on comm's rank, checks that every rank registered
// the same (see the package doc) and sets every parameter to rank 0's
// values. Every rank of comm must call it, with the same Config; its error
// is the same kind on every rank. ctx bounds the checks and the broadcast.
func New(ctx context.Context, comm *collective.Comm, params []Param, cfg Config) (*Model, error) {
	if comm == nil {
		return nil, errors.New("ddp: nil communicator")
	}
	cfg, cfgErr := cfg.withDefaults()
	localErr := cfgErr
	if localErr == nil {
		localErr = checkParams(params)
	}
	if err := checkRegistration(ctx, comm, params, cfg, localErr); err != nil {
		return nil, err
	}
	m := &Model{comm: comm, cfg: cfg, params: params}
	m.layout()
	if err := m.broadcast(ctx); err != nil {
		return nil, fmt.Errorf("ddp: broadcasting rank 0's parameters: %w", err)
	}
	m.resetStep()
	return m, nil
}

// checkParams reports the first invalid parameter on this rank.
func checkParams(params []Param) error {
	if len(params) == 0 || len(params) > MaxParams {
		return fmt.Errorf("ddp: %d parameters registered; want 1 to %d", len(params), MaxParams)
	}
	for i, p := range params {
		if len(p.Data) == 0 {
			return fmt.Errorf("ddp: parameter %d (%s) has no data", i, p.Name)
		}
		if p.Shape == nil {
			continue
		}
		n := 1
		for _, d := range p.Shape {
			if d <= 0 || n > len(p.Data) {
				n = -1
				break
			}
			n *= d
		}
		if n != len(p.Data) {
			return fmt.Errorf("ddp: parameter %d (%s) has shape %v but %d elements", i, p.Name, p.Shape, len(p.Data))
		}
	}
	return nil
}

// layout fills the buckets in reverse parameter order, closing each once
// it holds its limit or more, as PyTorch DDP does.
func (m *Model) layout() {
	m.grads = make([][]float32, len(m.params))
	m.bucket = make([]int, len(m.params))
	limit := m.cfg.FirstBucketBytes
	var cur []int
	curBytes := 0
	closeBucket := func() {
		b := &bucket{params: cur, grad: make([]float32, curBytes/4)}
		if m.cfg.BF16 {
			b.wire = make([]dtype.BFloat16, len(b.grad))
		}
		off := 0
		for _, i := range cur {
			n := len(m.params[i].Data)
			m.grads[i] = b.grad[off : off+n : off+n]
			m.bucket[i] = len(m.buckets)
			off += n
		}
		m.buckets = append(m.buckets, b)
		cur, curBytes, limit = nil, 0, m.cfg.BucketBytes
	}
	for i := len(m.params) - 1; i >= 0; i-- {
		cur = append(cur, i)
		curBytes += 4 * len(m.params[i].Data)
		if curBytes >= limit || i == 0 {
			closeBucket()
		}
	}
}

// broadcast sets every parameter to rank 0's values, one Broadcast per
// bucket, through the bucket's buffer.
func (m *Model) broadcast(ctx context.Context) error {
	if m.comm.Size() == 1 {
		return nil
	}
	for _, b := range m.buckets {
		off := 0
		for _, i := range b.params {
			off += copy(b.grad[off:], m.params[i].Data)
		}
		if err := collective.Broadcast(ctx, m.comm, b.grad, b.grad, 0); err != nil {
			return err
		}
		off = 0
		for _, i := range b.params {
			off += copy(m.params[i].Data, b.grad[off:])
		}
		clear(b.grad)
	}
	return nil
}

// Grad returns parameter i's gradient buffer (of len(Data) elements, in the
// parameter's layout), where backward writes and where Wait leaves the
// average. It is the same slice for the Model's life. It panics if i is
// not a registered parameter's index, as indexing a slice does.
func (m *Model) Grad(i int) []float32 { return m.grads[i] }

// Params returns the registered parameters.
func (m *Model) Params() []Param { return m.params }

// ZeroGrad sets every gradient to zero, before a step's backward.
func (m *Model) ZeroGrad() {
	for _, b := range m.buckets {
		clear(b.grad)
	}
}

// Buckets returns the parameter indices of each bucket, in the order the
// buckets are reduced.
func (m *Model) Buckets() [][]int {
	out := make([][]int, len(m.buckets))
	for k, b := range m.buckets {
		out[k] = append([]int(nil), b.params...)
	}
	return out
}
