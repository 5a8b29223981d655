package fulltext

// This file is the English (Porter2) stemmer, written from the published
// description of the algorithm at
// https://snowballstem.org/algorithms/english/stemmer.html (Martin Porter,
// "The English (Porter2) stemming algorithm", with its 2006 revisions: the
// gener/commun/arsen prefixes and the two exception lists). Later revisions
// (2023 undoubling change, 2025 exceptions) are not applied; the test data is
// the snowball-data vocabulary of that algorithm.

// englishException1 are whole words stemmed by table before any step.
var englishException1 = map[string]string{
	"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli",
	"singly": "singl",
	"sky":    "sky", "news": "news", "howe": "howe",
	"atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}

// englishException2 are words left alone after step 1a.
var englishException2 = map[string]bool{
	"inning": true, "outing": true, "canning": true, "herring": true,
	"earring": true, "proceed": true, "exceed": true, "succeed": true,
}

func enVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func enDouble(w []rune) bool {
	n := len(w)
	if n < 2 || w[n-1] != w[n-2] {
		return false
	}
	switch w[n-1] {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

func enValidLi(r rune) bool {
	switch r {
	case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
		return true
	}
	return false
}

// enStemmer holds one word while it is stemmed. Y marks a consonant y.
type enStemmer struct {
	w      []rune
	p1, p2 int
}

func (s *enStemmer) vowel(i int) bool { return enVowel(s.w[i]) }

func (s *enStemmer) hasSuffix(suf string) bool {
	n := len(s.w)
	rs := []rune(suf)
	if len(rs) > n {
		return false
	}
	for i, r := range rs {
		if s.w[n-len(rs)+i] != r {
			return false
		}
	}
	return true
}

// longest returns the longest of the suffixes the word ends with, or "".
func (s *enStemmer) longest(sufs ...string) string {
	best := ""
	for _, x := range sufs {
		if len(x) > len(best) && s.hasSuffix(x) {
			best = x
		}
	}
	return best
}

func (s *enStemmer) replace(suf, with string) {
	s.w = append(s.w[:len(s.w)-len([]rune(suf))], []rune(with)...)
}

// start is the index where suffix suf begins.
func (s *enStemmer) start(suf string) int { return len(s.w) - len([]rune(suf)) }

// containsVowel reports a vowel in w[:end].
func (s *enStemmer) containsVowel(end int) bool {
	for i := 0; i < end; i++ {
		if s.vowel(i) {
			return true
		}
	}
	return false
}

// shortSyllableAt reports whether w[:end] ends in a short syllable: a
// non-vowel, a vowel, then a non-vowel other than w, x and Y; or, at the
// start of the word, a vowel followed by a non-vowel.
func (s *enStemmer) endsShort(end int) bool {
	w := s.w
	if end == 2 {
		return enVowel(w[0]) && !enVowel(w[1])
	}
	if end >= 3 {
		c := w[end-1]
		return !enVowel(w[end-3]) && enVowel(w[end-2]) && !enVowel(c) && c != 'w' && c != 'x' && c != 'Y'
	}
	return false
}

func (s *enStemmer) isShort() bool { return s.p1 >= len(s.w) && s.endsShort(len(s.w)) }

func (s *enStemmer) markRegions() {
	n := len(s.w)
	s.p1, s.p2 = n, n
	word := string(s.w)
	p1 := -1
	for _, pre := range []string{"gener", "commun", "arsen"} {
		if len(word) >= len(pre) && word[:len(pre)] == pre {
			p1 = len([]rune(pre))
		}
	}
	if p1 < 0 {
		p1 = s.afterVC(0)
	}
	s.p1 = p1
	s.p2 = s.afterVC(p1)
}

// afterVC returns the index after the first non-vowel that follows a vowel
// at or after from, or len(w).
func (s *enStemmer) afterVC(from int) int {
	n := len(s.w)
	i := from
	for i < n && !s.vowel(i) {
		i++
	}
	for i < n && s.vowel(i) {
		i++
	}
	if i >= n {
		return n
	}
	return i + 1
}

func stemEnglish(word string) string {
	if x, ok := englishException1[word]; ok {
		return x
	}
	w := []rune(word)
	if len(w) < 3 {
		return word
	}
	if w[0] == '\'' {
		w = w[1:]
	}
	// Prelude: y at the start or after a vowel is a consonant, Y.
	for i := range w {
		if w[i] == 'y' && (i == 0 || enVowel(w[i-1])) {
			w[i] = 'Y'
		}
	}
	s := &enStemmer{w: w}
	s.markRegions()
	s.step1a()
	if !englishException2[string(s.w)] {
		s.step1b()
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	for i, r := range s.w {
		if r == 'Y' {
			s.w[i] = 'y'
		}
	}
	return string(s.w)
}

func (s *enStemmer) step1a() {
	if suf := s.longest("'", "'s", "'s'"); suf != "" {
		s.replace(suf, "")
	}
	switch suf := s.longest("sses", "ied", "ies", "s", "us", "ss"); suf {
	case "sses":
		s.replace(suf, "ss")
	case "ied", "ies":
		if s.start(suf) > 1 {
			s.replace(suf, "i")
		} else {
			s.replace(suf, "ie")
		}
	case "s":
		// Delete if a vowel occurs before the letter preceding the s.
		if st := s.start(suf); st >= 1 && s.containsVowel(st-1) {
			s.replace(suf, "")
		}
	}
}

func (s *enStemmer) step1b() {
	switch suf := s.longest("eed", "eedly", "ed", "edly", "ing", "ingly"); suf {
	case "eed", "eedly":
		if s.start(suf) >= s.p1 {
			s.replace(suf, "ee")
		}
	case "ed", "edly", "ing", "ingly":
		if !s.containsVowel(s.start(suf)) {
			return
		}
		s.replace(suf, "")
		switch {
		case s.hasSuffix("at"), s.hasSuffix("bl"), s.hasSuffix("iz"):
			s.w = append(s.w, 'e')
		case enDouble(s.w):
			s.w = s.w[:len(s.w)-1]
		case s.isShort():
			s.w = append(s.w, 'e')
		}
	}
}

func (s *enStemmer) step1c() {
	n := len(s.w)
	if n > 2 && (s.w[n-1] == 'y' || s.w[n-1] == 'Y') && !enVowel(s.w[n-2]) {
		s.w[n-1] = 'i'
	}
}

var enStep2 = map[string]string{
	"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
	"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate",
	"alism": "al", "aliti": "al", "alli": "al", "fulness": "ful", "ousli": "ous",
	"ousness": "ous", "iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble",
	"ogi": "og", "fulli": "ful", "lessli": "less", "li": "",
}

var enStep2Keys = keysOf(enStep2)

func (s *enStemmer) step2() {
	suf := s.longest(enStep2Keys...)
	if suf == "" || s.start(suf) < s.p1 {
		return
	}
	st := s.start(suf)
	switch suf {
	case "ogi":
		if st < 1 || s.w[st-1] != 'l' {
			return
		}
	case "li":
		if st < 1 || !enValidLi(s.w[st-1]) {
			return
		}
	}
	s.replace(suf, enStep2[suf])
}

var enStep3 = map[string]string{
	"tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic",
	"ical": "ic", "ful": "", "ness": "", "ative": "",
}

var enStep3Keys = keysOf(enStep3)

func (s *enStemmer) step3() {
	suf := s.longest(enStep3Keys...)
	if suf == "" || s.start(suf) < s.p1 {
		return
	}
	if suf == "ative" && s.start(suf) < s.p2 {
		return
	}
	s.replace(suf, enStep3[suf])
}

var enStep4Keys = []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement",
	"ment", "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion"}

func (s *enStemmer) step4() {
	suf := s.longest(enStep4Keys...)
	if suf == "" || s.start(suf) < s.p2 {
		return
	}
	if suf == "ion" {
		st := s.start(suf)
		if st < 1 || (s.w[st-1] != 's' && s.w[st-1] != 't') {
			return
		}
	}
	s.replace(suf, "")
}

func (s *enStemmer) step5() {
	n := len(s.w)
	if n == 0 {
		return
	}
	switch s.w[n-1] {
	case 'e':
		st := n - 1
		if st >= s.p2 || (st >= s.p1 && !s.endsShort(st)) {
			s.w = s.w[:st]
		}
	case 'l':
		st := n - 1
		if st >= s.p2 && st >= 1 && s.w[st-1] == 'l' {
			s.w = s.w[:st]
		}
	}
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
