package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FileVersion is the newest version of the topology file format. Parse
// accepts versions 1 and 2; Marshal writes 1 for a topology without Links
// and without a rank's "machine", "cores" or "cpus" (so that older readers
// load it) and 2 for one with any of them.
//
// Version 2 adds two optional top-level keys: "levels", an object with
// optional keys "host", "site" and "wan", and "links", an array of links
// between two hosts; each figure is an object
//
//	{"latency": "25us", "bandwidth": 1.25e9, "lanes": 1}
//
// with latency one way as a Go duration, bandwidth in bytes per second of
// one transfer, and lanes (optional, default 1) the transfers that get the
// full bandwidth at once; a link also has "hosts": ["a", "b"]. A figure
// may also give the CPU its transport costs (optional, 0 or absent:
// unknown): "cpu_per_byte", seconds of CPU per byte moved (sender and
// receiver together, e.g. 3.5e-10; "cpu_per_byte_busy" the same while
// every pair of the level moves bytes at once), "cpu_per_message", a
// Go duration of CPU per message, and "latency_busy", a Go duration, the
// latency one way while every pair of the level exchanges small messages
// at once, and "latency_cold", a Go duration, the latency one way of a
// message whose receiver has slept; a rank's "cpu" may give "machine", "cores" and "cpus" (see
// [CPUInfo]). Files without them load as before. See [Links].
//
// Version 2 is not frozen: its optional keys grew during its life
// ("cpu_per_byte" and "cpu_per_message", then "cpu_per_byte_busy" and a
// rank's "machine", "cores" and "cpus", then "latency_busy", then a
// top-level "reduce_per_byte": seconds of CPU a rank spends reducing a
// byte, e.g. 1.5e-10, see [Links], then "latency_cold"). The reader is strict (an unknown
// key is an error naming it and its offset), so a reader older than a key
// refuses a file that has it; it never misreads one. Figures: a latency in
// [0, MaxLatency], a bandwidth of at least MinBandwidth bytes per second,
// the CPU figures within MaxCPUPerByte and MaxCPUPerMessage, a busy
// and a cold latency in [0, MaxLatency], a reduce_per_byte within MaxCPUPerByte.
const FileVersion = 2

// MaxFileBytes is the largest topology file Parse and Load accept.
const MaxFileBytes = 256 << 20

// maxJSONDepth bounds the nesting of a topology file; the format itself
// nests 5 deep (file, ranks, rank, nics, nic, addrs).
const maxJSONDepth = 16

// fileJSON is the top level of a topology file. Pointers mark required
// fields, so that a missing one is an error rather than a zero.
type fileJSON struct {
	Version *int                `json:"version"`
	Ranks   []rankJSON          `json:"ranks"`
	Levels  map[string]linkJSON `json:"levels,omitempty"`          // version 2
	Links   []hostLinkJSON      `json:"links,omitempty"`           // version 2
	Reduce  *float64            `json:"reduce_per_byte,omitempty"` // version 2
}

// rankJSON is RankInfo as stored in a file; the keys match RankInfo's tags.
type rankJSON struct {
	Rank      *int    `json:"rank"`
	Host      string  `json:"host"`
	Site      string  `json:"site,omitempty"`
	LocalRank *int    `json:"local_rank"`
	Addr      string  `json:"addr,omitempty"`
	NICs      []NIC   `json:"nics,omitempty"`
	CPU       CPUInfo `json:"cpu,omitzero"`
}

// Marshal returns t as an indented JSON topology file that [Parse] reads
// back to the topology New(t.Ranks) returns, with t.Links: ranks sorted by
// rank, every site named. The output depends only on that topology. Marshal returns an
// error wrapping ErrInvalid if t is not valid, so every file it writes can
// be loaded.
//
// The file is an object {"version": 1, "ranks": [...]}, each rank an object
// with the keys of RankInfo's JSON tags; "rank", "host" and "local_rank"
// are required. With Links, or a rank's CPU Machine, Cores or CPUs, it is
// version 2 (see [FileVersion]).
func Marshal(t Topology) ([]byte, error) {
	links := t.Links
	t, err := New(t.Ranks)
	if err != nil {
		return nil, err
	}
	t.Links = links
	if err := t.Validate(); err != nil {
		return nil, err
	}
	version := 1
	if links != nil || slices.ContainsFunc(t.Ranks, func(ri RankInfo) bool {
		return ri.CPU.Machine != "" || ri.CPU.Cores != 0 || ri.CPU.CPUs != ""
	}) {
		version = 2
	}
	file := fileJSON{Version: &version, Ranks: make([]rankJSON, len(t.Ranks))}
	file.Levels, file.Links, file.Reduce = linksToJSON(links)
	for i := range t.Ranks {
		ri := &t.Ranks[i]
		file.Ranks[i] = rankJSON{
			Rank: &ri.Rank, Host: ri.Host, Site: ri.Site, LocalRank: &ri.LocalRank,
			Addr: ri.Addr, NICs: ri.NICs, CPU: ri.CPU,
		}
	}
	out, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		panic("topology: marshal a validated topology: " + err.Error())
	}
	return append(out, '\n'), nil
}

// Load reads and parses the topology file at path; see [Parse].
func Load(path string) (Topology, error) {
	f, err := os.Open(path)
	if err != nil {
		return Topology{}, fmt.Errorf("topology: load: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return Topology{}, fmt.Errorf("topology: load: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return Topology{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse reads a topology file as written by [Marshal] and returns the valid
// topology it describes, as [New] returns it.
//
// Parsing is strict. Parse rejects, with an error wrapping ErrInvalid that
// says what and, where it can, at which byte offset: input over
// MaxFileBytes, invalid UTF-8, malformed JSON, data after the top-level
// object, keys that are unknown, misspelt in case or repeated within an
// object, values of the wrong JSON type (including fractions for integers),
// a missing or unsupported "version", a rank missing "rank" or
// "local_rank", nesting deeper than the format needs, and any topology that
// fails [Topology.Validate].
func Parse(data []byte) (Topology, error) {
	if len(data) > MaxFileBytes {
		return Topology{}, invalidf("file: more than %d bytes", MaxFileBytes)
	}
	if !utf8.Valid(data) {
		return Topology{}, invalidf("file: not valid UTF-8")
	}
	if err := checkKeys(data); err != nil {
		return Topology{}, fmt.Errorf("%w: file: %v", ErrInvalid, err)
	}
	var file fileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return Topology{}, fmt.Errorf("%w: file: %s", ErrInvalid, describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Topology{}, invalidf("file: offset %d: data after the topology object", dec.InputOffset())
	}
	if file.Version == nil {
		return Topology{}, invalidf("file: missing \"version\"")
	}
	if *file.Version != 1 && *file.Version != 2 {
		return Topology{}, invalidf("file: version %d, want 1 or 2", *file.Version)
	}
	if *file.Version == 1 && (file.Levels != nil || file.Links != nil || file.Reduce != nil) {
		return Topology{}, invalidf("file: \"levels\", \"links\" and \"reduce_per_byte\" need version 2, not 1")
	}
	links, err := linksFromJSON(file.Levels, file.Links, file.Reduce)
	if err != nil {
		return Topology{}, err
	}
	if len(file.Ranks) > MaxRanks {
		return Topology{}, invalidf("file: %d ranks, more than the limit of %d", len(file.Ranks), MaxRanks)
	}
	ranks := make([]RankInfo, len(file.Ranks))
	for i, r := range file.Ranks {
		if r.Rank == nil {
			return Topology{}, invalidf("ranks[%d]: missing \"rank\"", i)
		}
		if r.LocalRank == nil {
			return Topology{}, invalidf("ranks[%d] (rank %d): missing \"local_rank\"", i, *r.Rank)
		}
		ranks[i] = RankInfo{
			Rank: *r.Rank, Host: r.Host, Site: r.Site, LocalRank: *r.LocalRank,
			Addr: r.Addr, NICs: r.NICs, CPU: r.CPU,
		}
	}
	t, err := New(ranks)
	if err != nil || links == nil {
		return t, err
	}
	t.Links = links
	if err := t.Validate(); err != nil {
		return Topology{}, err
	}
	return t, nil
}

// describeJSONError rewords encoding/json's errors in terms of the file.
func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("offset %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		field := "the file"
		if typ.Field != "" {
			// encoding/json's path names an embedded struct and leaves a
			// map's key out: "links.linkJSON.bandwidth", "levels.bandwidth".
			f := strings.ReplaceAll(typ.Field, ".linkJSON", "")
			if rest, ok := strings.CutPrefix(f, "levels."); ok {
				f = "levels.LEVEL." + rest
			}
			field = strconv.Quote(f)
		}
		return fmt.Sprintf("offset %d: %s is a JSON %s, want %s", typ.Offset, field, typ.Value, jsonKind(typ.Type))
	case errors.Is(err, io.EOF):
		return "empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int:
		return "an integer"
	}
	return t.String()
}
