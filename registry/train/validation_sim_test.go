package train

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder"
	"repro/internal/infocse"
	"repro/registry"
)

// TestValidationSimilarity: with validation_similarity = "dot" the model
// selection of train.infonce ranks the validation headlines by the inner
// product (InfoCSE's eq. 1), so the best evaluation recorded is the saved
// model's dot-product R@5, not its cosine R@5; an unknown name is refused.
func TestValidationSimilarity(t *testing.T) {
	train, val := bbc(t, 40)
	in := map[string]registry.Artifact{
		"data":       artifact(t, registry.KindDocPairs, registry.FilePairs, neighbourPairs(train)),
		"validation": artifact(t, registry.KindDocuments, registry.FileDocuments, val),
	}
	set := contrastTiny(map[string]cty.Value{"similarity": cty.StringVal("dot"), "temperature": cty.NumberIntVal(1),
		"validation_similarity": cty.StringVal("dot")})
	out, _, err := stageRun{name: "train.infonce", set: set, seed: 3, inputs: in}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readHistory(t, out)
	if h.BestDev == nil {
		t.Fatalf("no evaluation: %+v", h)
	}
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := infocse.NewHeadlines(val, "validation")
	if err != nil {
		t.Fatal(err)
	}
	dot, err := hs.RecallBy(context.Background(), enc, 5, infocse.Dot)
	if err != nil {
		t.Fatal(err)
	}
	cos, err := hs.RecallBy(context.Background(), enc, 5, infocse.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(dot-*h.BestDev) > 1e-9 {
		t.Errorf("best evaluation %v, the saved model's dot-product R@5 %v (cosine %v)", *h.BestDev, dot, cos)
	}
	if dot == cos {
		t.Fatalf("dot and cosine R@5 agree (%v): the fixture does not tell them apart", dot)
	}
	bad := contrastTiny(map[string]cty.Value{"validation_similarity": cty.StringVal("l2")})
	if _, _, err := (stageRun{name: "train.infonce", set: bad, seed: 3, inputs: in}).run(t); err == nil ||
		!strings.Contains(err.Error(), `validation_similarity: "l2" is not one of dot, cosine`) {
		t.Errorf("validation_similarity l2: %v", err)
	}
}
