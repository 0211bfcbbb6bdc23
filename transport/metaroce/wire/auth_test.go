package wire

import (
	"bytes"
	"testing"
)

func TestHelloAuthFields(t *testing.T) {
	h := Hello{Src: 5, Paths: 4, MaxDatagram: 9000, MsgWindow: 64, Auth: 2}
	h.Nonce[0], h.Proof[15] = 7, 9
	b := AppendHello(nil, &h)
	if len(b) != HeaderLen+helloBodyLen+helloAuthLen+CRCLen {
		t.Fatalf("keyed HELLO is %d bytes", len(b))
	}
	var got Hello
	if err := ParseHello(b, &got); err != nil || got != h {
		t.Fatalf("ParseHello = %v, %+v; want %+v", err, got, h)
	}
	h.Auth = 0
	if b := AppendHello(nil, &h); len(b) != HeaderLen+helloBodyLen+CRCLen {
		t.Fatalf("HELLO without a key is %d bytes, want the unauthenticated size", len(b))
	}
	h.Auth = MaxAuth + 1
	if err := ParseHello(AppendHello(nil, &h), &got); err != ErrMalformed {
		t.Fatalf("Auth %d: %v", h.Auth, err)
	}
	c := Close{Conn: 3, Code: CloseAuth}
	c.Echo[3] = 1
	var gc Close
	if err := ParseClose(AppendClose(nil, &c), &gc); err != nil || gc != c {
		t.Fatalf("ParseClose(CloseAuth) = %v, %+v", err, gc)
	}
}

func TestHeaderCovered(t *testing.T) {
	d := sampleData()
	p := AppendData(nil, &d)
	a, b, err := HeaderCovered(p)
	if err != nil || !bytes.Equal(a, p[:DataHeadLen]) || len(b) != 0 {
		t.Fatalf("DATA: %v, %d and %d bytes", err, len(a), len(b))
	}
	ack, blocks, grants := sampleAck()
	d.Flags |= FlagAck
	d.AckBody = AckBody(AppendAck(nil, &ack, blocks, grants))
	p = AppendData(nil, &d)
	if a, b, err = HeaderCovered(p); err != nil || !bytes.Equal(b, d.AckBody) || len(a) != DataHeadLen {
		t.Fatalf("DATA with ACK: %v, %d and %d bytes", err, len(a), len(b))
	}
	pr := AppendProbe(nil, &Probe{Conn: 1})
	if a, b, err = HeaderCovered(pr); err != nil || !bytes.Equal(a, pr[:len(pr)-CRCLen]) || b != nil {
		t.Fatalf("PROBE: %v", err)
	}
	if _, _, err := HeaderCovered(p[:DataHeadLen+2]); err == nil {
		t.Fatal("a DATA cut short of its payload was covered")
	}
}

// FuzzAuthParse: the trailer's and the header tag's parsers never panic,
// and what they return lies within their input: HeaderCovered's parts
// are the packet less a DATA payload and the CRC.
func FuzzAuthParse(f *testing.F) {
	seedAll(f)
	f.Add(AppendHello(nil, &Hello{Src: 5, Paths: 4, MaxDatagram: 9000, MsgWindow: 64, Auth: 1}))
	f.Add(AppendClose(nil, &Close{Conn: 1, Code: CloseAuth}))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseAll(t, b)
		if len(b) >= CRCLen {
			parseAll(t, fixCRC(bytes.Clone(b)))
		}
		if p, tag, _, err := SplitTrailer(b); err == nil {
			if len(p)+len(tag)+PNLen != len(b) || len(tag) != TagLen {
				t.Fatalf("SplitTrailer: %d + %d of %d bytes", len(p), len(tag), len(b))
			}
		}
		if h, err := PeekHeader(b); err == nil && (b[0] != Version || byte(h.Type) != b[1]) {
			t.Fatalf("PeekHeader: %+v", h)
		}
		x, y, err := HeaderCovered(b)
		if err != nil {
			return
		}
		if len(x)+len(y) > len(b)-CRCLen || !bytes.Equal(x, b[:len(x)]) {
			t.Fatalf("HeaderCovered: %d + %d of %d bytes", len(x), len(y), len(b))
		}
		if len(y) > 0 && !bytes.Equal(y, b[len(b)-CRCLen-len(y):len(b)-CRCLen]) {
			t.Fatal("HeaderCovered's second part is not the bytes before the CRC")
		}
	})
}
