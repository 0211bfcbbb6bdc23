package launcher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/gocoll/gocoll/topology"
)

// recordVersion is the version of the rank record format.
const recordVersion = 1

// maxRecordBytes bounds one rank's record in the store.
const maxRecordBytes = 256 << 10

// rankRecord is what each rank publishes when the world forms: enough for
// every other rank to check that they are in the same job, connect to it,
// and place it in the topology.
type rankRecord struct {
	Version   int               `json:"v"`
	Launcher  string            `json:"launcher"`
	Size      int               `json:"size"`
	Transport string            `json:"transport"`
	Addr      string            `json:"addr"` // the transport's address for this rank
	Info      topology.RankInfo `json:"info"`
	Probe     string            `json:"probe,omitempty"` // GOCOLL_PROBE (ProbeMode's String): alike on every rank
	Links     *linksRecord      `json:"links,omitempty"` // rank 0's: the figures of GOCOLL_TOPO_FILE and GOCOLL_LINKS (probe.go)
	Dump      bool              `json:"dump,omitempty"`  // rank 0's: it writes GOCOLL_TOPO_DUMP (probe.go's saveLinks)
	// Fail is why this rank cannot join (rank 0's GOCOLL_TOPO_FILE), in
	// one line: every rank's Join fails with it (checkRecords), at once
	// rather than at its timeout.
	Fail string `json:"fail,omitempty"`
}

// failure is the error of every rank's Join when rank's record says it
// cannot join (Fail), or nil.
func (r rankRecord) failure(rank int) error {
	if r.Fail == "" {
		return nil
	}
	return fmt.Errorf("rank %d cannot join: %s", rank, r.Fail)
}

func encodeRecord(r rankRecord) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecordBytes {
		return nil, fmt.Errorf("rank record of %d bytes exceeds %d (too many network interfaces?)", len(b), maxRecordBytes)
	}
	return b, nil
}

// decodeRecord parses rank's record strictly: one JSON object, known keys
// only, of this format version.
func decodeRecord(rank int, b []byte) (rankRecord, error) {
	var r rankRecord
	if len(b) > maxRecordBytes {
		return r, fmt.Errorf("rank %d's record has %d bytes, more than %d", rank, len(b), maxRecordBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("rank %d's record: %v", rank, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return r, fmt.Errorf("rank %d's record: data after the object", rank)
	}
	if r.Version != recordVersion {
		return r, fmt.Errorf("rank %d's record has version %d, want %d (mixed gocoll versions?)", rank, r.Version, recordVersion)
	}
	if r.Info.Rank != rank {
		return r, fmt.Errorf("rank %d's record claims rank %d", rank, r.Info.Rank)
	}
	return r, nil
}

// checkRecords checks that every rank's record agrees with mine, and
// returns the ranks' transport addresses and topology.
func checkRecords(mine rankRecord, values [][]byte) ([]string, topology.Topology, error) {
	addrs := make([]string, len(values))
	infos := make([]topology.RankInfo, len(values))
	for r, v := range values {
		rec, err := decodeRecord(r, v)
		if err != nil {
			return nil, topology.Topology{}, err
		}
		switch {
		case rec.Fail != "":
			return nil, topology.Topology{}, rec.failure(r)
		case rec.Size != mine.Size:
			return nil, topology.Topology{}, fmt.Errorf("rank %d is in a world of %d ranks, this one of %d", r, rec.Size, mine.Size)
		case rec.Transport != mine.Transport:
			return nil, topology.Topology{}, fmt.Errorf("rank %d uses transport %s, this one %s (set %s alike everywhere)", r, rec.Transport, mine.Transport, EnvTransport)
		case rec.Probe != mine.Probe:
			return nil, topology.Topology{}, fmt.Errorf("rank %d has %s=%s, this one %s (set it alike everywhere)", r, EnvProbe, rec.Probe, mine.Probe)
		case rec.Addr == "":
			return nil, topology.Topology{}, fmt.Errorf("rank %d published no address", r)
		}
		addrs[r], infos[r] = rec.Addr, rec.Info
	}
	numberLocalRanks(infos)
	topo, err := topology.New(infos)
	if err != nil {
		return nil, topology.Topology{}, fmt.Errorf("the ranks' placement: %v (set %s and %s per rank if host names clash)", err, EnvHost, EnvLocalRank)
	}
	return addrs, topo, nil
}

// numberLocalRanks gives the ranks of every host on which some rank did not
// know its local rank (-1) local ranks 0, 1, ... in rank order.
func numberLocalRanks(infos []topology.RankInfo) {
	unknown := map[string]bool{}
	for _, ri := range infos {
		if ri.LocalRank < 0 {
			unknown[ri.Host] = true
		}
	}
	next := map[string]int{}
	for i := range infos { // infos[i] is rank i
		if h := infos[i].Host; unknown[h] {
			infos[i].LocalRank = next[h]
			next[h]++
		}
	}
}
