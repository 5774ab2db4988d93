package syncse

// The paper's pools (Zhang, Lan and He, "Contrastive Learning of Sentence
// Embeddings from Scratch", Appendices A and B), as printed in
// ../shared/papers/syncse.md.
//
// Restored placeholders. The copy of the paper lost every placeholder of
// the sentence-generation prompts (its braces were stripped, leaving
// "may appear in , covering a range of subjects (, , , , , ,etc.)" and
// "Kindly generate ] unique sentences"). They are restored where they
// obviously stand, as {genre} (Appendix B: "we first specify a genre and
// fill it into the "" in the prompt of Table 15"), {topic1} .. {topic6}
// ("randomly choose 6 from the topic list to fill into """), {count} (the
// number of sentences asked for: "Kindly generate ] unique sentences" and
// Appendix C's 10 per one-shot example and 20 per call) and, in Table 16's
// fourth prompt, {caption1} .. {caption4} (four example captions: "the
// following image captions: , , , ."). Where the count stood is not
// visible in the other prompts; it is put before the sentences' adjectives
// ("Devise {count} distinct and diverse sentences"), as in "generate ]
// unique sentences". The positive and hard-negative prompts have no
// placeholder. Everything else is verbatim, typos included ("a altering").

// PositivePrompts is Table 12, the prompt pool for positive annotations.
var PositivePrompts = []string{
	"Please paraphrase the input sentence or phrase, providing an alternative expression with the same meaning.",
	"Rewrite the following sentence or phrase using different words and sentence structure while preserving its original meaning.",
	"Create a sentence or phrase that is also true, assuming the provided input sentence or phrase is true.",
	"Please provide a concise paraphrase of the input sentence or phrase, maintaining the core meaning while altering the words and sentence structure. Feel free to omit some of the non-essential details like adjectives or adverbs.",
}

// NegativePrompts is Table 1, the prompt pool for hard-negative annotations.
var NegativePrompts = []string{
	"Revise the provided sentence by swapping, changing, or contradicting some details in order to express a different meaning, while maintaining the general context and structure.",
	"Generate a slightly modified version of the provided sentence to express an opposing or alternate meaning by changing one or two specific elements, while maintaining the overall context and sentence structure.",
	"Transform the input sentence by adjusting, altering, or contradicting its original meaning to create a logical and sensible output sentence with a different meaning from the input sentence.",
	"Generate a sentence that conveys a altering, contrasting or opposite idea to the given input sentence, while ensuring the new sentence is logical, realistic, and grounded in common sense.",
}

// SentencePrompts is Table 15, the prompt pool for unlabeled sentences of a
// genre on six topics, placeholders restored.
var SentencePrompts = []string{
	`Devise {count} distinct and diverse sentences that may appear in {genre}, covering a range of subjects ({topic1}, {topic2}, {topic3}, {topic4}, {topic5}, {topic6}, etc.). These sentences should present a mix of complexity levels, from elementary structures akin to "Birds fly in the sky." to more sophisticated ones. Aim for a low degree of lexical overlap and an extensive vocabulary. Incorporate a variety of sentence modes - declarative, interrogative, exclamatory, imperative, and descriptive. The sentences should oscillate in tone between informative, persuasive, descriptive, and narrative, and should present varied perspectives. Vary the length of the sentences, ranging from concise phrases of 3-5 words to longer sentences containing 20-40 words.`,
	`Construct {count} varied and diverse sentences that may appear in {genre} encompassing a multitude of topics such as {topic1}, {topic2}, {topic3}, {topic4}, {topic5}, {topic6} and so on. Aim for low lexical repetition and a rich vocabulary variety. Ensure to blend different sentence structures - declarative, interrogative, exclamatory, imperative, and descriptive. The sentences should convey different tones, including informative, persuasive, descriptive, and narrative, and should be expressed from various perspectives. Vary the length of the sentences, ranging from concise phrases of 3-5 words to longer sentences containing 20-30 words.`,
	`Create {count} varied and diverse sentences that may appear in {genre}, spanning an array of topics such as {topic1}, {topic2}, {topic3}, {topic4}, {topic5}, {topic6} and so on. Include a mix of sentence styles - declarative, interrogative, exclamatory, imperative, and descriptive. Vary the length of the sentences, ranging from concise phrases of 3-5 words to 25-35 words.`,
	`Compose {count} assorted and diverse sentences that may appear in {genre}, touching upon various themes like {topic1}, {topic2}, {topic3}, {topic4}, {topic5}, {topic6} and so on. The sentences should reflect a spectrum of complexity levels, from basic structures such as "The sun sets in the west." to more elaborate forms. Aspire for minimal lexical redundancy and a wide array of vocabulary. Incorporate a blend of sentence types - declarative, interrogative, exclamatory, imperative, and descriptive. The sentences should shift in tone, cycling between informative, persuasive, descriptive, and narrative, and should vary in perspective. Vary the length of the sentences, ranging from concise phrases of 3-5 words to longer sentences containing 25-45 words.`,
}

// CaptionPrompts is Table 16, the prompt pool for image captions,
// placeholders restored.
var CaptionPrompts = []string{
	`Please randomly generate {count} diverse sentences in the style of {genre}, similar to image captions in the Flickr30k dataset, covering a wide range of subjects, actions, contexts, and settings. The sentences do not need to be semantically related. Please make sure to generate sentences with a uniform distribution in length, ranging from short phrases to longer ones.`,
	`Kindly generate {count} unique sentences reflecting the style of {genre}, drawing inspiration from the diverse scenarios found in the Flickr30k dataset. The sentences should cover an extensive array of themes, actions, surroundings, and situations. Please create a mix of simple sentences like "A man strums a guitar", along with more elaborate ones.`,
	`Kindly generate {count} distinct sentences with simple structures, each may appear in {genre}. These sentences should touch on a wide array of topics, actions, and environments without necessarily having a semantic link. Strive to provide sentences of various lengths, from short to moderately long, all while maintaining simplicity and clarity.`,
	`Please randomly generate {count} diverse and descriptive sentences which may appear in {genre}, ensuring they mirror the structure of the following image captions: {caption1}, {caption2}, {caption3}, {caption4}. Each sentence should vividly portray the primary activity in a hypothetical image or segment of a video, articulating the main subject(s), their actions, and any important objects or secondary subjects involved.`,
}

// Genres is Table 10 as printed: 21 genre descriptions (Appendix B's text
// says 20).
var Genres = []string{
	"in-person conversations",
	"letters",
	"reports, speeches, letters, and press releases from public domain government websites",
	"fiction",
	"image descriptions",
	"video descriptions",
	"news from websites or newspapers",
	"reviews and critiques for shopping",
	"headlines of news",
	"dialogue of technical or Instructional tutorial",
	"informative and expository texts which provide guidance or explanations related to a wide range of topics",
	"STEM examination questions",
	"travelogue",
	"historical description",
	"plots involving political intrigue and maneuvering",
	"formal writings that present research findings or scholarly discussion",
	"speeches given by politicians, often with the intent of persuading or informing an audience about political topics",
	"written works such as poetry, drama, and novels",
	"pieces of content shared on social media platforms",
	"short image captions",
	"messages paid for by a business or individual to promote a product, service, or event",
}

// CaptionGenres are the genres of Genres that take the image-caption prompt
// pool (Table 16 mentions "an image or segment of a video").
var CaptionGenres = []string{"image descriptions", "video descriptions", "short image captions"}

// Topics is Appendix B's topic list as printed: 37 topics (the text also
// says 31 and 37).
var Topics = []string{
	"nature", "technology", "food", "sports", "culture", "history", "animals", "environment", "politics",
	"finance", "education", "social issues", "global issues", "entertainment", "healthcare", "war",
	"mathematical and electrical engineering", "crime", "relationships and emotional bonds",
	"magic and mythical creatures", "personal life stories", "business strategies", "fitness and mental health",
	"global warming and conservation", "various forms of art and cultural practices",
	"teaching methodologies and learning styles", "recipes and culinary techniques",
	"ethical dilemmas and existential questions", "space exploration and celestial phenomena",
	"legal issues and courtroom drama", "examination of past events and civilizations", "ancient myths and legends",
	"scientific theories", "life stories of notable individuals", "COVID-19", "immigration policies", "mental health",
}
