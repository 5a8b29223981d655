// Package epk holds partition key values and computes Cosmos DB effective
// partition keys (EPKs) byte for byte as the service and its SDKs do. It is
// pure: no I/O, no clock, no globals that change.
//
// # Model
//
// A container's partition key Definition names one (Hash) or two to three
// (MultiHash, hierarchical) JSON paths. A document's Key is the list of
// values at those paths, one Component each: undefined (path absent), null,
// false, true, a number (float64) or a string. Clients send the key of a
// point operation in the x-ms-documentdb-partitionkey header as a JSON array
// (ParseHeader); the server reads the values out of documents with
// ComponentFromJSON. Definition.EPK maps a full key to its EPK, an uppercase
// hex string; partition key ranges are half-open intervals [Min, Max) of EPK
// strings compared lexicographically, from "" to "FF" (Range).
//
// # Hashing input
//
// Each component is written as a type marker and a payload:
//
//	undefined 00 | null 01 | false 02 | true 03
//	number    05 + 8 bytes: IEEE-754 bits, little-endian
//	string    08 + UTF-8 bytes + terminator (00 for V1, FF for V2)
//
// # V2 (Hash, version 2)
//
// MurmurHash3_x64_128 (seed 0) of the concatenated encodings of all
// components gives (h1, h2). The EPK bytes are LE64(h1)‖LE64(h2) reversed,
// i.e. BE64(h2)‖BE64(h1), with the top two bits of the first byte cleared
// (byte0 &= 0x3F), as 32 uppercase hex digits. Strings are not truncated.
//
// # MultiHash (hierarchical keys, version 2)
//
// Each component is hashed on its own as in V2 (and masked on its own), and
// the 32-digit results are concatenated: 64 or 96 hex digits. A prefix of a
// key (the first one or two components) selects every document in the EPK
// range [EPK(prefix), EPK(prefix)+"FF") (Definition.PrefixRange).
//
// # V1 (Hash, version 1)
//
// Strings are first cut to their first 100 UTF-16 code units. h =
// MurmurHash3_x86_32 (seed 0) of the hashing encoding with the 00 string
// terminator, and the EPK is the hex of
//
//	encodeNumber(float64(h)) ‖ encodeValue(component)
//
// where encodeNumber is the order-preserving, self-delimiting number encoding
// also used for range boundaries (appendEncodeNumber) and encodeValue writes
// the marker, a number with encodeNumber, or a string as its UTF-8 bytes plus
// one each followed by 00 (strings over 100 UTF-8 bytes: the first 101 bytes
// plus one and no terminator). This is the form the JS SDK and .NET routing
// produce, e.g. ["redmond"] → 05C1EFE313830C087366656E706F6500. The Go SDK's
// ReadMany uses a different 12-zero-byte form ("000000000000000000000000" +
// %08X of h); that form is not an EPK that range boundaries understand and is
// not produced here.
//
// Divergences from the JS SDK, which has byte-level bugs here; this package
// follows the .NET/Java/Python SDKs in each case, and none of them changes
// the hash prefix, so range membership is unaffected except as noted:
//   - encodeNumber always writes its final byte; JS drops it when it is 00,
//     which happens for payloads with only the top byte set (numbers such as
//     0, 2, 131072, 0.5^15). For the hash part this affects h in {0, 2,
//     131072}, and there the JS form would not even be order-preserving.
//   - strings of more than 100 UTF-8 bytes after truncation (non-ASCII text)
//     are cut to 101 bytes without a terminator; JS writes all bytes and 00.
//   - JS drops encoded bytes below 0x10 (control characters in strings, and
//     the first byte of numbers below about -2^769); they are kept here.
//
// # Ranges over the real hash domain
//
// Masking leaves every V2 and MultiHash EPK in [00…, 40…): the first hex
// digit is 0-3. A container that is split into n ranges by dividing the hex
// space "".."FF" evenly would therefore keep all its data in the first
// quarter of the ranges. Definition.EvenRanges instead divides the real
// domain: [0, 2^126) for V2 and MultiHash (boundaries rendered as 32 hex
// digits), and the uint32 hash domain for V1 (boundary hash b rendered as
// the hex of encodeNumber(float64(b)); because that encoding is
// order-preserving and prefix-free, a V1 EPK sorts at or after the boundary
// exactly when its hash is >= b). For n = 2 these are the boundaries the
// service itself uses.
//
// # Errors
//
// Bad keys wrap ErrInvalidKey and bad definitions ErrInvalidDefinition; both
// mean 400 Bad Request. EvenRanges panics on n < 1 (or n > 2^32 for V1), a
// caller bug.
package epk
