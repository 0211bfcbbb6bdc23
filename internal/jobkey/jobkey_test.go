package jobkey

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const testText = "0123456789abcdef-test-key"

func TestParse(t *testing.T) {
	for _, bad := range []string{"", "short", strings.Repeat("k", MinLen-1), strings.Repeat("k", MaxLen+1),
		"0123456789abcdef with space", "0123456789abcdef\n", "0123456789abcdef\x00", "0123456789abcdef\xff"} {
		k, err := Parse(bad)
		if !errors.Is(err, ErrInvalid) || !k.IsZero() {
			t.Errorf("Parse(%q) = %v, %v; want ErrInvalid and the zero Key", bad, k, err)
		}
		if len(bad) >= 4 && strings.Contains(err.Error(), bad) {
			t.Errorf("Parse's error %q repeats the key", err)
		}
	}
	for _, good := range []string{strings.Repeat("k", MinLen), strings.Repeat("~", MaxLen), testText} {
		k, err := Parse(good)
		if err != nil || k.IsZero() || k.IsInsecure() || k.Reveal() != good {
			t.Errorf("Parse(%q) = %v, %v", good, k, err)
		}
	}
}

func TestGenerate(t *testing.T) {
	a, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Reveal()) != GeneratedLen || a.Equal(b) {
		t.Fatalf("two generated keys: lengths %d, %d, equal %v", len(a.Reveal()), len(b.Reveal()), a.Equal(b))
	}
	p, err := Parse(a.Reveal())
	if err != nil || !p.Equal(a) {
		t.Fatalf("Parse(Reveal()) = %v, equal %v", err, p.Equal(a))
	}
	if !Insecure().IsInsecure() || Insecure().Equal(a) || !Insecure().Equal(Insecure()) {
		t.Fatal("Insecure is not a distinct, fixed, flagged key")
	}
	if (Key{}).Equal(a) || !(Key{}).Equal(Key{}) {
		t.Fatal("the zero Key's Equal")
	}
}

// TestRedacted: no fmt verb, encoder or enclosing struct prints the secret.
func TestRedacted(t *testing.T) {
	k, err := Parse(testText)
	if err != nil {
		t.Fatal(err)
	}
	type wrapper struct {
		Name string
		Key  Key
		Ptr  *Key
	}
	w := wrapper{"job", k, &k}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%08.3v", "%-30s"} {
		outs = append(outs, fmt.Sprintf(verb, k), fmt.Sprintf(verb, w), fmt.Sprintf(verb, &k))
	}
	outs = append(outs, fmt.Sprint(k, &k, w), fmt.Sprintln(w))
	js, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(js))
	hexText := fmt.Sprintf("%x", []byte(testText))
	for _, o := range outs {
		if strings.Contains(o, testText) || strings.Contains(o, hexText) || strings.Contains(o, testText[:MinLen]) {
			t.Errorf("output %q shows the key", o)
		}
		if !strings.Contains(o, "redacted") {
			t.Errorf("output %q does not say redacted", o)
		}
	}
}

// TestDerive: Derive is RFC 5869 HKDF-SHA256 with the documented salt and
// info, and separates purposes and contexts.
func TestDerive(t *testing.T) {
	k, err := Parse(testText)
	if err != nil {
		t.Fatal(err)
	}
	want, err := hkdf.Key(sha256.New, []byte(testText), []byte(salt), PurposeStore+"\x00\x00\x00\x00\x02ab\x00\x00\x00\x00", Size)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Derive(PurposeStore, []byte("ab"), nil); !bytes.Equal(got, want) {
		t.Fatalf("Derive = %x, HKDF = %x", got, want)
	}
	seen := map[string]string{}
	for _, c := range []struct {
		name    string
		purpose string
		context [][]byte
	}{
		{"store", PurposeStore, nil},
		{"tcp", PurposeTCP, nil},
		{"metaroce", PurposeMetaRoCE, nil},
		{"shm", PurposeSHM, nil},
		{"store a|bc", PurposeStore, [][]byte{[]byte("a"), []byte("bc")}},
		{"store ab|c", PurposeStore, [][]byte{[]byte("ab"), []byte("c")}},
		{"store abc", PurposeStore, [][]byte{[]byte("abc")}},
		{"store empty", PurposeStore, [][]byte{{}}},
	} {
		d := k.Derive(c.purpose, c.context...)
		if len(d) != Size {
			t.Fatalf("%s: %d bytes", c.name, len(d))
		}
		if !bytes.Equal(d, k.Derive(c.purpose, c.context...)) {
			t.Fatalf("%s: not deterministic", c.name)
		}
		if prev, dup := seen[string(d)]; dup {
			t.Fatalf("%s and %s derive the same key", c.name, prev)
		}
		seen[string(d)] = c.name
	}
	other, _ := Parse(testText + "x")
	if bytes.Equal(other.Derive(PurposeStore), k.Derive(PurposeStore)) {
		t.Fatal("two keys derive the same store key")
	}
}

func TestTag(t *testing.T) {
	key := bytes.Repeat([]byte{7}, Size)
	tag := Tag(key, []byte("hello"), []byte("world"))
	if !Verify(key, tag[:], []byte("hello"), []byte("world")) {
		t.Fatal("a full tag does not verify")
	}
	for n := MinTagSize; n <= TagSize; n++ {
		if !Verify(key, tag[:n], []byte("hello"), []byte("world")) {
			t.Fatalf("a tag truncated to %d bytes does not verify", n)
		}
	}
	if Verify(key, tag[:MinTagSize-1], []byte("hello"), []byte("world")) || Verify(key, nil, []byte("helloworld")) {
		t.Fatal("a too-short tag verifies")
	}
	if Verify(key, tag[:], []byte("hellow"), []byte("orld")) || Verify(key, tag[:], []byte("helloworld")) {
		t.Fatal("a tag verifies with its bytes shifted between parts")
	}
	bad := tag
	bad[3] ^= 1
	if Verify(key, bad[:], []byte("hello"), []byte("world")) {
		t.Fatal("a flipped tag verifies")
	}
	if Verify(bytes.Repeat([]byte{8}, Size), tag[:], []byte("hello"), []byte("world")) {
		t.Fatal("a tag verifies under another key")
	}
	tg := NewTagger(key)
	for i := 0; i < 3; i++ { // reuse
		if got := tg.Tag(nil, []byte("hello"), []byte("world")); !bytes.Equal(got, tag[:]) || !tg.Verify(got[:12], []byte("hello"), []byte("world")) {
			t.Fatalf("Tagger run %d disagrees with Tag", i)
		}
	}
	a, err := NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewNonce()
	if a == b {
		t.Fatal("two nonces are equal")
	}
}

// FuzzParse: Parse never panics, accepts exactly the documented texts, and
// its errors never contain the text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", testText, strings.Repeat("a", MinLen), "0123456789abcdef ", "\x00\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := Parse(s)
		valid := len(s) >= MinLen && len(s) <= MaxLen
		for i := 0; i < len(s); i++ {
			valid = valid && s[i] > 0x20 && s[i] < 0x7f
		}
		if valid != (err == nil) {
			t.Fatalf("Parse(%q): err %v, want valid=%v", s, err, valid)
		}
		if err != nil {
			if len(s) >= 4 && strings.Contains(err.Error(), s) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q shows the key or spans lines", err)
			}
			return
		}
		if k.Reveal() != s || len(k.Derive(PurposeTCP, []byte(s))) != Size || strings.Contains(fmt.Sprint(k), s) {
			t.Fatalf("Parse(%q) gave a wrong key", s)
		}
	})
}
