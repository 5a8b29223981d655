// Package explorer serves Parsec Explorer, the database in a browser: a
// single-page application under /_explorer/ that browses and edits
// databases, containers and items, runs queries, draws a container's
// physical partitions live with their hottest keys, and runs the
// partition-key advisor on a live container.
//
// Why it is shaped so:
//
//   - The page is static files embedded in the binary (assets/), plain
//     ECMAScript modules and CSS with no build step and no dependencies, so
//     `go build` needs no Node.js and nothing is fetched from the internet.
//   - The page holds no privilege of its own. It signs every request in the
//     browser with the account key (WebCrypto HMAC, exactly as the SDKs sign)
//     and calls the same REST endpoints the SDKs call, so the server has no
//     new unauthenticated endpoint that serves data, and a read-only key gives
//     a read-only explorer. The key lives only in the tab's session storage.
//   - The one thing the server tells the page is whether it runs with the
//     well-known emulator key (which is public, and which the server only
//     accepts on loopback), so that the sign-in form can be filled in.
//   - Every response carries a strict Content-Security-Policy: scripts,
//     styles and connections from this origin only, no inline script, no
//     framing.
package explorer
