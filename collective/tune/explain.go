package tune

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Explain writes, for coll on in, every candidate with its predicted time,
// fastest first, and marks the one Choose picks: what `gocoll topo
// --explain` is to print.
func Explain(w io.Writer, coll Collective, in Input) error {
	p, err := Predict(coll, in)
	if err != nil {
		return err
	}
	t := in.Topology
	fmt.Fprintf(w, "# %v of %d B on %d ranks (%d hosts, %d sites), chunk %d B\n",
		coll, in.Bytes, t.Size(), len(t.Hosts()), len(t.Sites()), in.ChunkBytes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "algorithm\tpredicted\n")
	for i, pr := range p {
		mark := ""
		if i == 0 {
			mark = "  (chosen)"
		}
		name := pr.Algorithm
		if pr.Channels > 1 {
			name = fmt.Sprintf("%s on %d channels", name, pr.Channels)
		}
		if pr.Chunk > 0 {
			name = fmt.Sprintf("%s (chunks of %d B)", name, pr.Chunk)
		}
		fmt.Fprintf(tw, "%s\t%v%s\n", name, pr.Time.Round(100*time.Nanosecond), mark)
	}
	return tw.Flush()
}
