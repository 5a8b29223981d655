package fulltext

import "strings"

// This file is the Spanish stemmer of Snowball 2, written from the
// published description of the algorithm ("Spanish stemming algorithm",
// https://snowballstem.org/algorithms/spanish/stemmer.html, as published
// before the Snowball 3.0.0 changes: snowball-website commit 0b89c02). The
// test data is the snowball-data Spanish vocabulary of that algorithm.

func esVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'á', 'é', 'í', 'ó', 'ú', 'ü':
		return true
	}
	return false
}

// rvSpanish is the start of RV: after the next vowel if the second letter
// is a consonant; after the next consonant if the first two are vowels;
// else after the third letter. The end of the word when not found.
func rvSpanish(w []rune, v func(rune) bool) int {
	n := len(w)
	if n < 2 {
		return n
	}
	next := func(from int, wantVowel bool) int {
		for i := from; i < n; i++ {
			if v(w[i]) == wantVowel {
				return i + 1
			}
		}
		return n
	}
	switch {
	case !v(w[1]):
		return next(2, true)
	case v(w[0]):
		return next(2, false)
	case n >= 3:
		return 3
	}
	return n
}

var (
	esPronouns  = []string{"me", "se", "sela", "selo", "selas", "selos", "la", "le", "lo", "las", "les", "los", "nos"}
	esPronounOf = []string{"iéndo", "ándo", "ár", "ér", "ír", "ando", "iendo", "ar", "er", "ir", "yendo"}
	esStep1     = strings.Fields(`anza anzas ico ica icos icas ismo ismos able ables ible ibles ista istas
		oso osa osos osas amiento amientos imiento imientos
		adora ador ación adoras adores aciones ante antes ancia ancias
		logía logías ución uciones encia encias amente mente idad idades iva ivo ivas ivos`)
	esStep2a = strings.Fields(`ya ye yan yen yeron yendo yo yó yas yes yais yamos`)
	esStep2b = strings.Fields(`en es éis emos
		arían arías arán arás aríais aría aréis aríamos aremos ará aré
		erían erías erán erás eríais ería eréis eríamos eremos erá eré
		irían irías irán irás iríais iría iréis iríamos iremos irá iré
		aba ada ida ía ara iera ad ed id ase iese aste iste an aban ían
		aran ieran asen iesen aron ieron ado ido ando iendo ió ar er ir as
		abas adas idas ías aras ieras ases ieses ís áis abais íais
		arais ierais aseis ieseis asteis isteis ados idos amos ábamos
		íamos imos áramos iéramos iésemos ásemos`)
)

var esUnaccent = strings.NewReplacer("á", "a", "é", "e", "í", "i", "ó", "o", "ú", "u")

func stemSpanish(word string) string {
	w := []rune(word)
	rv := rvSpanish(w, esVowel)
	p1, p2 := regions(w, esVowel)
	s := &suffixer{w: w}
	in := func(suf string, from int) bool { return s.ends(suf) && s.start(suf) >= from }

	// Step 0: attached pronoun after a verb ending in RV.
	if pr := s.longest(esPronouns...); pr != "" {
		base := &suffixer{w: s.w[:s.start(pr)]}
		switch v := base.longest(esPronounOf...); {
		case v == "":
		case base.start(v) < rv:
		case v == "yendo":
			if base.precededBy(v, 'u') {
				s.cut(pr)
			}
		case v == "iéndo" || v == "ándo" || v == "ár" || v == "ér" || v == "ír":
			st := base.start(v)
			s.w = append(s.w[:st], []rune(esUnaccent.Replace(v))...)
		default:
			s.cut(pr)
		}
	}

	// Step 1: standard suffixes.
	removed := false
	switch suf := s.longest(esStep1...); suf {
	case "":
	case "anza", "anzas", "ico", "ica", "icos", "icas", "ismo", "ismos", "able", "ables", "ible", "ibles",
		"ista", "istas", "oso", "osa", "osos", "osas", "amiento", "amientos", "imiento", "imientos":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
		}
	case "adora", "ador", "ación", "adoras", "adores", "aciones", "ante", "antes", "ancia", "ancias":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
			if in("ic", p2) {
				s.cut("ic")
			}
		}
	case "logía", "logías":
		if in(suf, p2) {
			s.replace(suf, "log")
			removed = true
		}
	case "ución", "uciones":
		if in(suf, p2) {
			s.replace(suf, "u")
			removed = true
		}
	case "encia", "encias":
		if in(suf, p2) {
			s.replace(suf, "ente")
			removed = true
		}
	case "amente":
		if in(suf, p1) {
			s.cut(suf)
			removed = true
			switch x := s.longest("iv", "os", "ic", "ad"); {
			case x == "" || !in(x, p2):
			case x == "iv":
				s.cut(x)
				if in("at", p2) {
					s.cut("at")
				}
			default:
				s.cut(x)
			}
		}
	case "mente":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
			if x := s.longest("ante", "able", "ible"); x != "" && in(x, p2) {
				s.cut(x)
			}
		}
	case "idad", "idades":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
			if x := s.longest("abil", "ic", "iv"); x != "" && in(x, p2) {
				s.cut(x)
			}
		}
	case "iva", "ivo", "ivas", "ivos":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
			if in("at", p2) {
				s.cut("at")
			}
		}
	}

	// Steps 2a and 2b: verb suffixes, in RV.
	if !removed {
		done := false
		if suf := s.longestIn(rv, esStep2a...); suf != "" && s.precededBy(suf, 'u') {
			s.cut(suf)
			done = true
		}
		if !done {
			switch suf := s.longestIn(rv, esStep2b...); suf {
			case "":
			case "en", "es", "éis", "emos":
				s.cut(suf)
				if s.ends("gu") {
					s.w = s.w[:len(s.w)-1]
				}
			default:
				s.cut(suf)
			}
		}
	}

	// Step 3: residual suffix.
	switch suf := s.longest("os", "a", "o", "á", "í", "ó", "e", "é"); suf {
	case "os", "a", "o", "á", "í", "ó":
		if in(suf, rv) {
			s.cut(suf)
		}
	case "e", "é":
		if in(suf, rv) {
			s.cut(suf)
			if s.ends("gu") && s.start("u") >= rv {
				s.w = s.w[:len(s.w)-1]
			}
		}
	}
	return esUnaccent.Replace(string(s.w))
}

func (s *suffixer) replace(suf, with string) {
	s.w = append(s.w[:s.start(suf)], []rune(with)...)
}

// longestIn is longest among the suffixes that lie at or after from.
func (s *suffixer) longestIn(from int, sufs ...string) string {
	best := ""
	for _, x := range sufs {
		if len([]rune(x)) > len([]rune(best)) && s.ends(x) && s.start(x) >= from {
			best = x
		}
	}
	return best
}
