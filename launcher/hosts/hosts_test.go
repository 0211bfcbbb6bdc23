package hosts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/topology"
)

const twoSites = `# two sites, two hosts each
s1h1 slots=2 site=s1 addr=10.1.0.11
s2h1 slots=2 site=s2 addr=10.2.0.11   # interleaved on purpose

s1h2 site=s1 slots=2 addr=10.1.0.12
s2h2 slots=2 addr=10.2.0.12 site=s2
`

func TestParseHostfile(t *testing.T) {
	got, err := ParseHostfile("hf", strings.NewReader(twoSites))
	require.NoError(t, err)
	require.Equal(t, []topology.HostSlots{
		{Host: "s1h1", Site: "s1", Addr: "10.1.0.11", Slots: 2},
		{Host: "s2h1", Site: "s2", Addr: "10.2.0.11", Slots: 2},
		{Host: "s1h2", Site: "s1", Addr: "10.1.0.12", Slots: 2},
		{Host: "s2h2", Site: "s2", Addr: "10.2.0.12", Slots: 2},
	}, got)

	_, err = ParseHostfile("hf", strings.NewReader("localhost\n[::1]\n"))
	require.Error(t, err) // brackets are not part of a hostfile host
	got, err = ParseHostfile("hf", strings.NewReader("localhost\nfd00::1 slots=3\n"))
	require.NoError(t, err)
	require.Equal(t, []topology.HostSlots{{Host: "localhost", Slots: 1}, {Host: "fd00::1", Slots: 3}}, got)
}

// Open MPI's max_slots= (and max-slots=) and MPICH's host:N lines.
func TestReadHostfileForms(t *testing.T) {
	in := "# Open MPI\nompi1 slots=2 max_slots=4\nompi2 max-slots=3\n# MPICH\nmpich1:4\nmpich2:2 site=lyon\nbare\nfd00::1 slots=2\n"
	got, err := ReadHostfile("hf", strings.NewReader(in))
	require.NoError(t, err)
	require.Equal(t, []Entry{
		{HostSlots: topology.HostSlots{Host: "ompi1", Slots: 2}, MaxSlots: 4},
		{HostSlots: topology.HostSlots{Host: "ompi2", Slots: 1}, MaxSlots: 3},
		{HostSlots: topology.HostSlots{Host: "mpich1", Slots: 4}},
		{HostSlots: topology.HostSlots{Host: "mpich2", Slots: 2, Site: "lyon"}},
		{HostSlots: topology.HostSlots{Host: "bare", Slots: 1}},
		{HostSlots: topology.HostSlots{Host: "fd00::1", Slots: 2}},
	}, got)
}

func TestParseHostfileErrors(t *testing.T) {
	cases := map[string]string{
		"":                                "hf: no hosts",
		"# only a comment\n\n":            "hf: no hosts",
		"a slots=0":                       "hf:1: slots=\"0\" is not a whole number",
		"a slots=x":                       "hf:1: slots=\"x\"",
		"a slots=-1":                      "hf:1: slots=\"-1\"",
		"a\nb slots":                      "hf:2: field \"slots\" is not key=value",
		"a max_slots=4 slots=5":           "hf:1: max_slots=4 is below slots=5",
		"a max_slots=x":                   "hf:1: max_slots=\"x\" is not a whole number",
		"a cpus=4":                        "hf:1: unknown field \"cpus=4\"",
		"a:4 slots=2":                     "hf:1: slots= given twice",
		"a:x":                             "hf:1: a:x: slots=\"x\"",
		"a:":                              "hf:1: a:: slots=\"\"",
		":4":                              "hf:1: empty host",
		"a slots=1 slots=2":               "hf:1: slots= given twice",
		"a\nb\na":                         "hf:3: host \"a\" already listed on line 1",
		"a addr=nohost":                   "hf:1: addr=\"nohost\" is not an IP address",
		"a site=pa/ris":                   "hf:1: site \"pa/ris\" has the character '/'",
		"h{host} slots=1":                 "hf:1: host \"h{host}\" has the character '{'",
		"-rf slots=1":                     "hf:1: host \"-rf\" starts with '-'",
		"a site=":                         "hf:1: empty site",
		strings.Repeat("x", 5000) + "\n":  "longer than 4096 bytes",
		"a slots=99999999999999999999999": "hf:1: slots=",
	}
	for in, want := range cases {
		_, err := ParseHostfile("hf", strings.NewReader(in))
		require.Error(t, err, "%q", in)
		require.Contains(t, err.Error(), want, "%q", in)
		require.NotContains(t, err.Error(), "\n")
	}
}

func TestParseHostList(t *testing.T) {
	got, err := ParseHostList("h1:4, h2:4,h3,[fd00::1]:2,fd00::2")
	require.NoError(t, err)
	require.Equal(t, []topology.HostSlots{
		{Host: "h1", Slots: 4}, {Host: "h2", Slots: 4}, {Host: "h3", Slots: 1},
		{Host: "fd00::1", Slots: 2}, {Host: "fd00::2", Slots: 1},
	}, got)
	for in, want := range map[string]string{
		"":           "empty host list",
		"h1:":        "slots=\"\"",
		"h1:0":       "slots=\"0\"",
		"h1,h1:2":    "listed twice",
		"h1,,h2":     "empty host",
		"[fd00::1":   "no closing ]",
		"[fd00::1]x": "want :slots after ]",
		"h 1:2":      "character ' '",
	} {
		_, err := ParseHostList(in)
		require.Error(t, err, "%q", in)
		require.Contains(t, err.Error(), want, "%q", in)
	}
}

func TestExpandNodeList(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want []string
	}{
		{"vm", 10, []string{"vm"}},
		{"gnode[10,20,25,37]", 10, []string{"gnode10", "gnode20", "gnode25", "gnode37"}},
		{"n[08-11],login", 10, []string{"n08", "n09", "n10", "n11", "login"}},
		{"r[1-2]-n[1-2]", 10, []string{"r1-n1", "r1-n2", "r2-n1", "r2-n2"}},
		{"n[1-2147483647]", 3, []string{"n1", "n2", "n3"}},
		{"a,b[1-5]", 1, []string{"a"}},
		{"n[7]x", 5, []string{"n7x"}},
	}
	for _, c := range cases {
		got, err := ExpandNodeList(c.in, c.max)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	for in, want := range map[string]string{
		"n[1-":             "[ without ]",
		"n]":               "] without [",
		"n[[1]]":           "nested [",
		"n[]":              "empty []",
		"n[3-1]":           "runs backwards",
		"n[x]":             "not a node number",
		"n[1-99999999999]": "not a node number",
		"a,,b":             "empty entry",
		"n[1],{x}":         "character '{'",
	} {
		_, err := ExpandNodeList(in, 10)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
	}
	_, err := ExpandNodeList("a", 0)
	require.Error(t, err)
}

func FuzzParseHostfile(f *testing.F) {
	f.Add(twoSites)
	f.Add("localhost slots=4\n")
	f.Add("a slots=1 site=x addr=::1 # c\n")
	f.Fuzz(func(t *testing.T, in string) {
		list, err := ParseHostfile("fuzz", strings.NewReader(in))
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		// Whatever parses is a host list rank assignment accepts.
		_, err = topology.AssignRanks(list)
		require.NoError(t, err)
	})
}

func FuzzParseHostList(f *testing.F) {
	f.Add("h1:4,h2:4")
	f.Add("[fd00::1]:2,fd00::2")
	f.Fuzz(func(t *testing.T, in string) {
		list, err := ParseHostList(in)
		if err != nil {
			return
		}
		_, err = topology.AssignRanks(list)
		require.NoError(t, err)
	})
}

func FuzzExpandNodeList(f *testing.F) {
	f.Add("gnode[10,20,25,37]", 8)
	f.Add("r[1-2]-n[01-03],login", 100)
	f.Fuzz(func(t *testing.T, in string, max int) {
		max = 1 + max&1023
		names, err := ExpandNodeList(in, max)
		if err != nil {
			return
		}
		require.NotEmpty(t, names)
		require.LessOrEqual(t, len(names), max)
		for _, n := range names {
			require.NoError(t, CheckHost(n))
		}
	})
}

func TestTooManySlots(t *testing.T) {
	_, err := ParseHostfile("hf", strings.NewReader("a slots=1048576\nb slots=1\n"))
	require.ErrorContains(t, err, "hf:2: more than 1048576 slots in all")
	_, err = ParseHostList("a:1048576,b:1")
	require.ErrorContains(t, err, "more than 1048576 slots in all")
}
