package mql

// Aggregation expressions ($field references, literals, arithmetic, $concat, $cond, $ifNull,
// comparison operators, $size, $toString) live here.
