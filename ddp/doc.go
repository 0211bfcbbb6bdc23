// Package ddp is data-parallel training over a gocoll communicator, as
// PyTorch's DistributedDataParallel: every rank holds a replica of the
// model, computes the gradient of its own batch, and the ranks average
// their gradients before each identical optimizer step.
//
//	m, err := ddp.New(ctx, world.Comm, []ddp.Param{{Name: "w1", Data: w1}, ...}, ddp.Config{})
//	for each batch {
//		m.ZeroGrad()
//		// backward, last layer first: write parameter i's gradient into
//		// m.Grad(i), then
//		m.Ready(ctx, i) // starts the AllReduce of i's bucket once the bucket is complete
//		if err := m.Wait(ctx); err != nil { ... } // m.Grad(i) is now the average
//		// optimizer step with m.Grad(i)
//	}
//	m.Join(ctx, step) // out of batches: shadow the others until all are
//
// # Registration
//
// New registers the parameters once, in the order the forward pass uses
// them. It checks, on every rank, that every rank registered the same number
// of parameters with the same shapes in the same order and the same Config;
// otherwise every rank gets an error naming the first rank and parameter
// that differ. Then each parameter's Data takes rank 0's values (Broadcast),
// so every replica starts equal.
//
// # Buckets
//
// Gradients live in buckets: flat float32 buffers, Grad(i) being a view of
// its bucket, so a bucket is reduced with no packing. Buckets are filled in
// reverse registration order, since backward produces the last layer's
// gradients first, and, as in PyTorch, a bucket is closed once it holds its
// limit or more: Config.FirstBucketBytes for the first (default 1 MiB, so
// communication starts early), Config.BucketBytes for the others (default
// 25 MiB). Buckets returns the layout.
//
// Ready(ctx, i) says that parameter i's gradient is final for this step. When
// every parameter of a bucket is ready, its AllReduce starts asynchronously
// (collective.AllReduceAsync) while backward goes on, so communication
// overlaps computation. Buckets start in bucket order on every rank,
// whatever order the parameters became ready in (a bucket ready early waits
// for the ones before it), since every rank must issue collectives in the
// same order. Wait starts every bucket not yet started (parameters never
// marked ready contribute their gradient as it stands: zero after ZeroGrad),
// waits for all of them, and leaves in each Grad(i) the average over the
// ranks. Stats reports how much of the communication ended before Wait
// was called, hidden behind backward.
//
// # Averages, uneven batches and Join
//
// With each step's AllReduces goes one of the ranks' weights (8 bytes,
// started with the first bucket): Wait divides the summed gradients by the
// summed weights. Each rank's weight is 1 unless SetWeight changes it for
// the step, so by default the result is the mean of the ranks' gradients.
// A rank whose gradient is a sum over its n samples (not a mean) and sets
// weight n gets the mean over every rank's samples: the single-process
// gradient of the global batch, whatever the batch sizes.
//
// Ranks with fewer batches (uneven last batches, uneven shards) call Join
// when they have none left: until every rank has joined, a joined rank takes
// part in the others' steps with zero gradients and weight 0, and calls its
// step function with the average after each, so its replica takes the same
// updates. Join returns on every rank once all have joined. A job that
// cannot use Join can drop the remainder instead (every rank the same
// number of equal batches, as a sampler with drop_last).
//
// # Accumulation and bfloat16
//
// NoSync(f) runs f with synchronisation off: Ready and Wait do nothing, so
// the gradients of several micro-batches add up in Grad (do not ZeroGrad
// between them); the next step outside NoSync reduces the sum.
//
// With Config.BF16 the gradients travel as bfloat16 (half the bytes), summed
// in bfloat16, and come back into the float32 buffers: the weights and the
// optimizer stay float32 (master weights), only the communication rounds to
// bfloat16's 8 bits of precision.
//
// # Errors
//
// Every blocking call takes a context; the AllReduces of a step run under
// the context given to the Ready (or Wait) that started them. An error of a
// step's communication is returned by Wait; the step's gradients are then
// not to be used. A context that ends while Wait waits leaves operations in
// flight on the buffers: the Model then fails every later call.
// A Model is for one goroutine's training loop, but Ready may be called from
// several goroutines (a parallel backward).
package ddp
