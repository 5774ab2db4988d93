// Package loss holds the training objectives of the reproduced papers,
// composed from repro/internal/tensor's batched operators so that each is
// differentiable and reproducible. Every loss returns a 1x1 tensor (the
// batch mean) ready for tensor.Backward, or an error for inputs that do
// not fit together (shapes, targets, temperature).
package loss

import (
	"fmt"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor"
)

// IgnoreIndex marks token targets the token losses skip.
const IgnoreIndex = tensor.IgnoreIndex

func diagonalTargets(n int) []int {
	t := make([]int, n)
	for i := range t {
		t[i] = i
	}
	return t
}

func sameShape(what string, a, b mat.Tensor) error {
	ar, ac := tensor.Dims(a)
	br, bc := tensor.Dims(b)
	if ar != br || ac != bc {
		return fmt.Errorf("%s: shapes %dx%d and %dx%d differ", what, ar, ac, br, bc)
	}
	return nil
}

func checkTemp(what string, temp float32) error {
	if !(temp > 0) {
		return fmt.Errorf("%s: temperature %v must be positive", what, temp)
	}
	return nil
}

// SimCSEUnsup is unsupervised SimCSE's objective: z1 and z2 [N, D] are
// the same sentences under two dropout masks; row i of z2 is the positive
// of row i of z1 and every other row an in-batch negative. It is the mean
// cross-entropy of cos(z1_i, z2_j)/temp over j with target i (SimCSE uses
// temp 0.05).
func SimCSEUnsup(z1, z2 mat.Tensor, temp float32) (mat.Tensor, error) {
	if err := sameShape("SimCSE loss", z1, z2); err != nil {
		return nil, err
	}
	if err := checkTemp("SimCSE loss", temp); err != nil {
		return nil, err
	}
	n, _ := tensor.Dims(z1)
	sim := tensor.Scale(tensor.CosineMatrix(z1, z2), 1/temp)
	return tensor.CrossEntropy(sim, diagonalTargets(n)), nil
}

// SimCSESup is supervised SimCSE's objective with hard negatives: anchor,
// pos and neg are [N, D] (NLI premise, entailment, contradiction); the
// anchor i is scored against all N positives and all N hard negatives and
// must pick positive i.
func SimCSESup(anchor, pos, neg mat.Tensor, temp float32) (mat.Tensor, error) {
	if err := sameShape("supervised SimCSE loss (anchor, positive)", anchor, pos); err != nil {
		return nil, err
	}
	if err := sameShape("supervised SimCSE loss (anchor, negative)", anchor, neg); err != nil {
		return nil, err
	}
	if err := checkTemp("supervised SimCSE loss", temp); err != nil {
		return nil, err
	}
	n, _ := tensor.Dims(anchor)
	sim := tensor.Scale(tensor.CosineMatrix(anchor, tensor.ConcatRows(pos, neg)), 1/temp)
	return tensor.CrossEntropy(sim, diagonalTargets(n)), nil
}

// InfoNCE is InfoCSE's objective (its eq. 1): the inner product <a_i, p_j>
// divided by temp (1 for the paper's plain inner product) scored with
// cross-entropy against target j = i, in-batch negatives.
func InfoNCE(a, p mat.Tensor, temp float32) (mat.Tensor, error) {
	if err := sameShape("InfoNCE loss", a, p); err != nil {
		return nil, err
	}
	if err := checkTemp("InfoNCE loss", temp); err != nil {
		return nil, err
	}
	n, _ := tensor.Dims(a)
	sim := tensor.MatMul(a, p, false, true)
	if temp != 1 {
		sim = tensor.Scale(sim, 1/temp)
	}
	return tensor.CrossEntropy(sim, diagonalTargets(n)), nil
}

// maskedOut is added to a logit to take its candidate out of the softmax:
// exp(x + maskedOut - max) is exactly 0 in float64, and finite values keep
// infinities out of the graph.
const maskedOut = -1e30

// InfoNCEMasked is InfoNCE (a [N, D] anchors, p [N, D] positives, target
// j = i) where candidates of the anchor's own group are no negatives:
// logit (i, j) is masked out of row i's softmax when groups[i] ==
// groups[j] and j != i. InfoCSE's positives come in groups (one document's
// pairs share sentences and topic), and at a batch of 3,200 pairs several
// of one document meet in a batch: scoring them as negatives would train
// against true positives. With cosine the vectors are L2-normalised first
// (SimCSE's cosine / temperature); otherwise it is the inner product of
// eq. 1, divided by temp.
func InfoNCEMasked(a, p mat.Tensor, temp float32, cosine bool, groups []int) (mat.Tensor, error) {
	if err := sameShape("InfoNCE loss", a, p); err != nil {
		return nil, err
	}
	if err := checkTemp("InfoNCE loss", temp); err != nil {
		return nil, err
	}
	n, _ := tensor.Dims(a)
	if groups != nil && len(groups) != n {
		return nil, fmt.Errorf("InfoNCE loss: %d groups for %d pairs", len(groups), n)
	}
	var sim mat.Tensor
	if cosine {
		sim = tensor.CosineMatrix(a, p)
	} else {
		sim = tensor.MatMul(a, p, false, true)
	}
	if temp != 1 {
		sim = tensor.Scale(sim, 1/temp)
	}
	var mask []float32
	for i, gi := range groups {
		for j, gj := range groups {
			if i != j && gi == gj {
				if mask == nil {
					mask = make([]float32, n*n)
				}
				mask[i*n+j] = maskedOut
			}
		}
	}
	if mask != nil {
		sim = tensor.Add(sim, tensor.New(n, n, mask))
	}
	return tensor.CrossEntropy(sim, diagonalTargets(n)), nil
}

// CosineMSE is the bi-encoder regression of Sentence-BERT that DINO trains
// with: the mean squared error between cos(a_i, b_i) and labels[i].
func CosineMSE(a, b mat.Tensor, labels []float32) (mat.Tensor, error) {
	if err := sameShape("cosine MSE loss", a, b); err != nil {
		return nil, err
	}
	n, _ := tensor.Dims(a)
	if len(labels) != n {
		return nil, fmt.Errorf("cosine MSE loss: %d labels for %d pairs", len(labels), n)
	}
	cos := tensor.RowDot(tensor.L2Normalize(a), tensor.L2Normalize(b))
	return tensor.MSE(cos, labels), nil
}

// TokenCE is the mean cross-entropy of logits [N, V] against token
// targets, skipping IgnoreIndex (padding): PaSeR's phrase reconstruction
// and GenSE's generation loss.
func TokenCE(logits mat.Tensor, targets []int) (mat.Tensor, error) {
	n, v := tensor.Dims(logits)
	if len(targets) != n {
		return nil, fmt.Errorf("token cross-entropy: %d targets for %d positions", len(targets), n)
	}
	for i, t := range targets {
		if t != IgnoreIndex && (t < 0 || t >= v) {
			return nil, fmt.Errorf("token cross-entropy: target %d at position %d outside the vocabulary of %d", t, i, v)
		}
	}
	return tensor.CrossEntropy(logits, targets), nil
}

// MLM is the masked-language-model loss: TokenCE where labels hold the
// original id at masked positions and IgnoreIndex elsewhere (HF's
// convention). A batch with no masked position is an error, since its
// loss would be undefined.
func MLM(logits mat.Tensor, labels []int) (mat.Tensor, error) {
	masked := 0
	for _, l := range labels {
		if l != IgnoreIndex {
			masked++
		}
	}
	if masked == 0 {
		return nil, fmt.Errorf("MLM loss: no masked position in the batch")
	}
	return TokenCE(logits, labels)
}
