// Package wire encodes and decodes MetaRoCE packets. Every function appends
// to or parses from a caller's buffer and none allocates; a parsed packet's
// variable parts (payload, ACK blocks, grants) alias the input.
//
// All integers are big-endian. Every packet starts with a 12-byte header and
// ends with a CRC32C (Castagnoli) of everything before it:
//
//	offset size field
//	0      1    version (2)
//	1      1    type: 1 HELLO, 2 HELLO-ACK, 3 DATA, 4 ACK, 5 PROBE, 6 CLOSE
//	2      1    flags (per type)
//	3      1    path index (0..255)
//	4      8    connection id of the receiver (0 in a HELLO)
//	12     ...  body (per type, below)
//	end-4  4    CRC32C over bytes [0, end-4)
//
// A DATA packet with flag 0x80 (payload unchecked) is the one exception:
// its CRC32C covers every byte before it except the payload. A sender sets
// it only on links that cannot damage data (loopback), where checking the
// payload would cost memory bandwidth and protect nothing.
//
// DATA (flags: 0x01 first, 0x02 last, 0x04 retransmission, 0x08
// unconfirmed, 0x10 announce, 0x20 abort, 0x40 ACK follows, 0x80 payload
// unchecked), 60 bytes +
// payload (+ ACK body):
//
//	8 per-path sequence number   8 send timestamp (ns, sender's clock)
//	8 stream id                  8 message id        (match key)
//	8 message sequence number    8 message total length
//	8 byte offset                4 payload length, then the payload
//	with flag 0x40: the body of an ACK (below), piggybacked
//
// ACK (no flags), 36 bytes + 61 per block + 8 per grant:
//
//	8 target rate (bytes/s, 0 = no limit)   8 credit limit (bytes)
//	8 lowest unfinished message sequence    8 send timestamp (receiver's clock)
//	2 block count   2 grant count
//	per block: 1 path, 8 cumulative sequence, 4 skip (the bitmap covers
//	           cumulative+1+skip..+256), 32 SACK bitmap (256 bits),
//	           8 echoed timestamp, 4 ack delay (ns), 4 ECN-CE count
//	per grant: 8 message sequence number
//
// HELLO and HELLO-ACK (flag 0x01 ACK room: DATA pieces leave room for a
// piggybacked ACK, see AckRoomLen), 42 bytes, or 75 with a key:
//
//	8 sender's connection id   8 sender's node id   2 paths offered
//	4 max datagram             4 message window     8 unexpected byte budget
//	8 timestamp (HELLO: when sent; HELLO-ACK: the answered HELLO's, echoed)
//	with a key: 1 authentication mode (1-3), 16 nonce, 16 proof
//
// PROBE (flag 0x01 reply), 16 bytes: 8 nonce, 8 timestamp (echoed by the reply).
//
// CLOSE (no flags), 4 bytes: 4 reason code; with code 3 (a HELLO refused
// for its key), 20: then 16 echo of the refused HELLO's nonce.
//
// On an authenticated connection, every packet but HELLO, HELLO-ACK and
// a CLOSE with code 3 ends, after its CRC, in a 24-byte trailer: 16 tag,
// 8 packet number (auth.go).
//
// Parsers check, in order: length, version, CRC, type, flags, field ranges,
// and that the body is exactly as long as its fields say. Any failure is one
// of the package's error values, never a panic.
package wire
