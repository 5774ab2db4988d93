package dsl

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Shared profile stage blocks. A profile's stage block may name several
// stages, and then applies its body to each of them:
//
//	profile "mini" {
//	  stage "partial" "scratch" "naive" {
//	    lm     = module.chat.chat_lm.model
//	    params = local.offline
//	  }
//	  stage "train[\"scratch\"]" "train[\"naive\"]" { batch_size = 8 }
//	}
//
// is the same as one block per label with the same body: each label is a
// stage (NAME) or one instance (NAME["KEY"]) as in a one-label block, and
// each.key/each.value are those of the stage's instance where it has
// for_each. A stage's own block wins over a shared one, wherever either is
// written (as an instance's own override wins over its stage's); two
// shared blocks that set the same attribute of the same stage, and a label
// written twice in one block, are errors at file:line. Keys are those of
// the blocks written out: an override holds its value, never how it was
// written.

// sharedBlock is one label of a shared stage block: the block as if it
// had only that label.
type sharedBlock struct {
	block *hcl.Block
}

// sharedStageBlocks takes the stage blocks with more than one label out
// of a profile's body, which can then be decoded against profileSchema's
// one-label stage blocks, and returns them split into one block per label
// (in the order written). Labels written twice in one block are reported
// by sharedOverrides.
func sharedStageBlocks(body hcl.Body) (hcl.Body, [][]sharedBlock) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return body, nil
	}
	var keep hclsyntax.Blocks
	var shared [][]sharedBlock
	for _, b := range sb.Blocks {
		if b.Type != "stage" || len(b.Labels) < 2 {
			keep = append(keep, b)
			continue
		}
		var split []sharedBlock
		for i, label := range b.Labels {
			c := *b
			c.Labels = []string{label}
			c.LabelRanges = []hcl.Range{b.LabelRanges[i]}
			split = append(split, sharedBlock{block: c.AsHCLBlock()})
		}
		shared = append(shared, split)
	}
	if len(shared) == 0 {
		return body, nil
	}
	out := *sb
	out.Blocks = keep
	return &out, shared
}

// sharedOverrides decodes the shared blocks of profile into overrides, as
// one-label blocks, reporting a label written twice in one block and an
// attribute two shared blocks set for the same stage.
func (d *decoder) sharedOverrides(profile string, shared [][]sharedBlock) []override {
	var out []override
	setBy := map[string]hcl.Range{} // override path -> the attribute that set it
	for _, split := range shared {
		seen := map[string]hcl.Range{}
		for _, sb := range split {
			label := sb.block.Labels[0]
			if prev, dup := seen[label]; dup {
				d.errorf(sb.block.LabelRanges[0], "Duplicate stage label",
					"Stage %q is named twice in this block (first at %s).", label, rangeLine(prev))
				continue
			}
			seen[label] = sb.block.LabelRanges[0]
			for _, o := range d.profileStageOverrides(profile, sb.block) {
				if prev, dup := setBy[o.target.path]; dup {
					d.errorf(o.rng, "Attribute set twice",
						"Profile %q sets %s in two shared stage blocks (here and at %s); set it in one of them, or in the stage's own block, which wins over a shared one.",
						profile, o.target.path, rangeLine(prev))
					continue
				}
				setBy[o.target.path] = o.rng
				out = append(out, o)
			}
		}
	}
	return out
}

// rangeLine is FILE:LINE of r.
func rangeLine(r hcl.Range) string { return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line) }
