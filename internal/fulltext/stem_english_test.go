package fulltext

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestStemEnglishSnowballData checks the stemmer against a sample of the
// Snowball project's own vocabulary and expected output (see
// testdata/README.md for the source and licence). The whole vocabulary
// (42,603 words at snowball-data commit 4412ee8) also matched when the
// stemmer was written.
func TestStemEnglishSnowballData(t *testing.T) {
	f, err := os.Open("testdata/snowball_english_sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		word, want, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		n++
		if got := stemEnglish(word); got != want {
			t.Errorf("stemEnglish(%q) = %q, want %q", word, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 4000 {
		t.Fatalf("only %d pairs read", n)
	}
}

// TestStemEnglishRules spells out one case of each rule of the published
// algorithm (https://snowballstem.org/algorithms/english/stemmer.html),
// worked by hand.
func TestStemEnglishRules(t *testing.T) {
	cases := []struct{ in, want string }{
		{"at", "at"},                  // two letters: unchanged
		{"skies", "sky"},              // exception list 1
		{"news", "news"},              // invariant exception
		{"proceed", "proceed"},        // exception list 2
		{"caresses", "caress"},        // sses -> ss
		{"ties", "tie"},               // ies after one letter -> ie
		{"cries", "cri"},              // ies after two letters -> i
		{"gaps", "gap"},               // s deleted (vowel before the preceding letter)
		{"gas", "gas"},                // s kept
		{"kiwis", "kiwi"},             // s deleted
		{"agreed", "agre"},            // eed in R1 ("reed") -> agree; step 5 drops the e (R1, "agr" not a short syllable)
		{"hoping", "hope"},            // ing removed, short word gets e
		{"hopping", "hop"},            // double undoubled
		{"luxuriated", "luxuri"},      // at + e, then steps 3-5
		{"cry", "cri"},                // step 1c
		{"by", "by"},                  // too short
		{"say", "say"},                // y after vowel is Y
		{"generously", "generous"},    // gener prefix for R1
		{"communication", "communic"}, // commun prefix
		{"conditional", "condit"},
		{"rational", "ration"},
		{"relational", "relat"},
		{"fearlessly", "fearless"}, // lessli -> less
		{"hopefulness", "hope"},    // fulness -> ful, then ful deleted
		{"electrical", "electr"},
		{"adoption", "adopt"},   // ion after t in R2
		{"controll", "control"}, // ll in R2
		{"dog's", "dog"},        // apostrophe s
		{"'tis", "tis"},         // leading apostrophe
	}
	for _, c := range cases {
		if got := stemEnglish(c.in); got != c.want {
			t.Errorf("stemEnglish(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
