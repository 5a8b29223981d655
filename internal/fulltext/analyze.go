package fulltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Language is a full-text language as a policy names it, in its canonical
// spelling ("en-US").
type Language string

// The languages the service lists for full-text policies
// (articles/cosmos-db/gen-ai/full-text-search.md, "Multi-language support
// (preview)", 2025-09-09): English is generally available, the others are
// in preview.
const (
	English      Language = "en-US"
	German       Language = "de-DE"
	Spanish      Language = "es-ES"
	French       Language = "fr-FR"
	Italian      Language = "it-IT"
	PortuguesePT Language = "pt-PT"
	PortugueseBR Language = "pt-BR"
)

// Languages lists the supported languages in the order error messages name
// them.
var Languages = []Language{English, German, Spanish, French, Italian, PortuguesePT, PortugueseBR}

// ParseLanguage returns the canonical language for s, compared without
// regard to case (the service's early documentation wrote "en-us").
func ParseLanguage(s string) (Language, bool) {
	for _, l := range Languages {
		if strings.EqualFold(s, string(l)) {
			return l, true
		}
	}
	return "", false
}

// Limits of analysis. Every loop over input text is bounded by them.
const (
	// MaxTermBytes is the longest token kept, in bytes after lower-casing.
	// A longer token is dropped, keeping its position.
	MaxTermBytes = 256
	// MaxTokens is the most tokens (stop words included) read from one
	// text; the rest of the text is ignored.
	MaxTokens = 1 << 18
	// MaxTextBytes is the most bytes of one text that are analysed.
	MaxTextBytes = 4 << 20
)

// Token is one term of an analysed text and its position: the index of the
// word in the text, counting the stop words and over-long words that were
// removed, so that a phrase with a stop word in it matches only the same
// gap.
type Token struct {
	Term string
	Pos  uint32
}

// Analyzer turns text into terms for one language. It is immutable and
// safe for concurrent use.
type Analyzer struct {
	lang Language
	stop map[string]struct{}
	stem func(string) string
}

var analyzers = func() map[Language]*Analyzer {
	m := make(map[Language]*Analyzer, len(Languages))
	for _, l := range Languages {
		a := &Analyzer{lang: l}
		switch l {
		case English:
			a.stop = englishStopWords
			a.stem = stemEnglish
		case German:
			a.stem = stemGerman
		case Spanish:
			a.stem = stemSpanish
		case PortuguesePT, PortugueseBR:
			a.stem = stemPortuguese
		case Italian:
			a.stem = stemItalian
		case French:
			a.stem = stemFrench
		}
		m[l] = a
	}
	return m
}()

// AnalyzerFor returns the analyzer of a language; an unknown language gets
// the English one (the default of a container without a policy).
func AnalyzerFor(l Language) *Analyzer {
	if a, ok := analyzers[l]; ok {
		return a
	}
	return analyzers[English]
}

// Language is the analyzer's language.
func (a *Analyzer) Language() Language { return a.lang }

// Stems reports whether the analyzer stems its terms.
func (a *Analyzer) Stems() bool { return a.stem != nil }

// Analyze splits text into words, lower-cases them, removes stop words and
// stems what remains. See the package documentation for the rules.
func (a *Analyzer) Analyze(text string) []Token {
	var out []Token
	a.words(text, func(w string, pos uint32) {
		if t, ok := a.term(w); ok {
			out = append(out, Token{Term: t, Pos: pos})
		}
	})
	return out
}

// term is the indexed form of one lower-cased word, or false for a stop
// word or an over-long word.
func (a *Analyzer) term(w string) (string, bool) {
	if len(w) > MaxTermBytes {
		return "", false
	}
	if _, stop := a.stop[w]; stop {
		return "", false
	}
	if a.stem != nil {
		w = a.stem(w)
	}
	return w, w != ""
}

// words calls f with each lower-cased word of text and its position.
//
// A word is a run of letters, digits and combining marks; an apostrophe
// (' or U+2019) between two such characters belongs to the word and is
// written '. Each Han, Hiragana or Katakana character is a word of its own
// (these scripts do not separate words by spaces). Everything else
// separates words. Text is put in Unicode normalization form C first, so
// that a precomposed and a decomposed "é" are the same letter.
func (a *Analyzer) words(text string, f func(string, uint32)) {
	if len(text) > MaxTextBytes {
		n := MaxTextBytes
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n]
	}
	if !norm.NFC.IsNormalString(text) {
		text = norm.NFC.String(text)
	}
	var b strings.Builder
	var pos uint32
	flush := func() bool {
		if b.Len() == 0 {
			return true
		}
		if pos >= MaxTokens {
			return false
		}
		f(b.String(), pos)
		pos++
		b.Reset()
		return true
	}
	var prev rune = -1
	for i, r := range text {
		switch {
		case isIdeograph(r):
			if !flush() {
				return
			}
			b.WriteRune(r)
			if !flush() {
				return
			}
			prev = -1
			continue
		case isWordRune(r):
			b.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '\u2019') && prev >= 0 && isWordRune(prev):
			next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			if isWordRune(next) && !isIdeograph(next) {
				b.WriteByte('\'')
			} else if !flush() {
				return
			}
		default:
			if !flush() {
				return
			}
		}
		prev = r
	}
	flush()
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

func isIdeograph(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r))
}
