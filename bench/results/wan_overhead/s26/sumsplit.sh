#!/bin/bash
grep "WAN/S site" "$1" | sed 's/.*WAN\/S site . -> .: //' | awk '
{ n++; tot += $1; res += $8; hdr += $13; d=$14; gsub("[()]","",d); datan += d; pig += $18; ackb += $23; a=$24; gsub("[(,]","",a); ackn += a; ackB += $25*a; fr += $37; sp=$53; spur += sp }
END { printf "WAN/S %.4f = 1 + resent %.4f + DATA headers %.4f + piggybacked %.4f + ACK datagrams %.4f (%.3f an ACK a DATA, %.0f B each) + frames %.4f; spurious %.4f [%d dir-lines]\n", tot/n, res/n, hdr/n, pig/n, ackb/n, ackn/datan, ackB/ackn, fr/n, spur/n, n }'
