"""Formats by what the reference is: option indices and digit labels, span objects and item lists,
token tag sequences, target-only number games, puzzle grids, exact transformations (ciphers), quantities with
units, and reference-free verse forms — each in a public dataset's own shape. None of these formats is in
``data/routing/heldout_unseen.jsonl`` (that file is never a source for this one)."""

from __future__ import annotations

import codecs
import random
from typing import Any

from rlar.benchmarks.routing_set.common import CHOICE, JUDGE, LABEL, NONE, Item, Task, records

SET_F1 = ["set_f1"]
SEQUENCE = ["sequence_match"]
GRID = ["sequence_match", "exact_match", "normalized_match"]
QUANTITY = ["quantity_match"]
EXACT = ["exact_match", "normalized_match"]

# -- option indices and digit labels ---------------------------------------------------------------------------
_SIQA = [
    (
        "Tracy didn't go home that evening and resisted Riley's attacks.",
        "What does Tracy need to do before this?",
        ["make a new plan", "go home and see Riley", "find somewhere to go"],
        "3",
    ),
    (
        "Sydney walked past a homeless woman asking for change but did not have any money they could give to her.",
        "How would you describe Sydney?",
        ["sympathetic", "like a person who was unable to help", "incredulous"],
        "1",
    ),
    (
        "Sasha protected the patients' rights by making new laws regarding consent and privacy.",
        "What will patients want to do next?",
        ["write new laws", "get petitions signed", "live longer"],
        "3",
    ),
    (
        "Jordan was in charge of taking the food on the camping trip and left all the food at home.",
        "How would Jordan feel afterwards?",
        [
            "horrible that he let his friends down",
            "happy that he doesn't need to do the cooking",
            "that he is the best camper",
        ],
        "1",
    ),
    (
        "Kendall opened their mouth to speak and what came out shocked everyone.",
        "How would you describe Kendall?",
        ["a very quiet person", "a very passive person", "a very aggressive and talkative person"],
        "3",
    ),
    (
        "Aubrey never told Riley the answer and Riley was angry.",
        "How would you describe Aubrey?",
        ["rude", "smug at knowing the answer", "annoyed at Riley's response"],
        "2",
    ),
    (
        "Remy gave Skylar's dog a treat after it did a trick.",
        "Why did Remy do this?",
        ["reward the dog", "punish the dog", "sell the dog"],
        "1",
    ),
    (
        "Cameron missed the bus and walked to school in the rain.",
        "How would Cameron feel?",
        ["dry and rested", "wet and tired", "rich"],
        "2",
    ),
    (
        "Lee studied all night for the exam and passed with top marks.",
        "What will Lee want to do next?",
        ["fail the course", "forget to study", "celebrate with friends"],
        "3",
    ),
    (
        "Quinn borrowed Ash's notes and returned them with coffee stains.",
        "What will Ash want to do?",
        ["ask Quinn to be careful", "give Quinn more notes", "buy Quinn a car"],
        "1",
    ),
]


def siqa(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "siqa",
        ["social_commonsense", "social-iqa"],
        ["", "Pick the answer that fits the social situation."],
        "allenai/social_i_qa",
    )
    items = [
        Item(
            f"{c}\nQuestion: {q}\n"
            + "\n".join(f"{j + 1}: {a}" for j, a in enumerate(opts))
            + "\nAnswer with 1, 2 or 3.",
            lab,
            CHOICE,
            {"answerA": opts[0], "answerB": opts[1], "answerC": opts[2]},
        )
        for c, q, opts, lab in _SIQA
    ]
    return records(task, items)


_COPA = [
    ("My body cast a shadow over the grass.", "cause", "The sun was rising.", "The grass was cut.", 0),
    (
        "The woman tolerated her friend's difficult behavior.",
        "cause",
        "The woman knew her friend was going through a hard time.",
        "The woman felt that her friend took advantage of her kindness.",
        0,
    ),
    (
        "The women met for coffee.",
        "cause",
        "The cafe reopened in a new location.",
        "They wanted to catch up with each other.",
        1,
    ),
    (
        "The runner wore shorts.",
        "cause",
        "The forecast predicted high temperatures.",
        "She planned to run along the beach.",
        0,
    ),
    (
        "The guests of the party hid behind the couch.",
        "cause",
        "It was a surprise party.",
        "It was a birthday party.",
        0,
    ),
    (
        "The politician lost the election.",
        "cause",
        "He ran negative campaign ads.",
        "No one voted for him.",
        1,
    ),
    ("The man broke his toe.", "cause", "He dropped a hammer on his foot.", "He got a hole in his sock.", 0),
    (
        "I tipped the bottle.",
        "effect",
        "The liquid in the bottle froze.",
        "The liquid in the bottle poured out.",
        1,
    ),
    (
        "The pond froze over for the winter.",
        "effect",
        "People skated on the pond.",
        "People brought boats to the pond.",
        0,
    ),
    ("The child caught a cold.", "cause", "He played outside without a coat.", "He ate his vegetables.", 0),
]


def copa(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "copa",
        ["choice_of_plausible_alternatives", "superglue-copa"],
        ["Which alternative is more plausible?", ""],
        "aps/super_glue:copa",
    )
    items = [
        Item(
            f"Premise: {p}\nWhat was the {q}?\n0) {c1}\n1) {c2}",
            lab,
            LABEL,
            {"choice1": c1, "choice2": c2, "question": q},
        )
        for p, q, c1, c2, lab in _COPA
    ]
    return records(task, items)


_STORY_CLOZE = [
    (
        "Rick grew up in a troubled household. He never found good support in family, and turned to gangs. It wasn't long before Rick got shot in a robbery. The incident caused him to turn a new leaf.",
        "He is happy now.",
        "He joined a gang.",
        1,
    ),
    (
        "Laverne needs to prepare something for her friend's party. She decides to bake a batch of brownies. She chooses a recipe and follows it closely. Laverne tests one of the brownies to make sure it is delicious.",
        "The brownies are so delicious Laverne eats two of them.",
        "Laverne doesn't go to her friend's party.",
        1,
    ),
    (
        "Sarah had been dreaming of visiting Europe for years. She had finally saved enough for the trip. She landed in Spain and traveled east across the continent. She didn't like how different everything was.",
        "Sarah then decided to move to Europe.",
        "Sarah decided that she preferred her home over Europe.",
        2,
    ),
    (
        "Gina was worried the cookie dough in the tube would be gross. She was very happy to find she was wrong. The cookies from the tube were as good as from scratch. Gina intended to only eat 2 cookies and save the rest.",
        "Gina liked the cookies so much she ate them all in one sitting.",
        "Gina gave the cookies away at her church.",
        1,
    ),
    (
        "It was my final performance in marching band. I was playing the snare drum in the band. We played Thriller and Radar Love. The performance was flawless.",
        "I was very proud of my performance.",
        "I was very ashamed of my performance.",
        1,
    ),
    (
        "Tom had a very short temper. One day a guest made him very angry. He punched a hole in the wall of his house. Tom's guest became afraid and left quickly.",
        "Tom sat on his couch filled with regret about his actions.",
        "Tom wanted to his guest to stay.",
        1,
    ),
    (
        "Ann wanted to learn to swim. She signed up for lessons. She practiced every week. By summer she could swim laps.",
        "Ann was proud of her progress.",
        "Ann was afraid of water forever.",
        1,
    ),
    (
        "Max lost his keys. He searched the house. He checked his coat pockets. He found them in the fridge.",
        "Max laughed at his mistake.",
        "Max bought a new fridge.",
        1,
    ),
    (
        "The storm knocked out the power. The family lit candles. They played board games. The lights came back at midnight.",
        "They went to bed relieved.",
        "They started a bonfire indoors.",
        1,
    ),
    (
        "Jen forgot her friend's birthday. She felt terrible. She baked a cake the next day. She brought it over with a card.",
        "Jen ignored her friend all week.",
        "Her friend forgave her.",
        2,
    ),
]


def story_cloze(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "story_cloze",
        ["story_ending_choice", "rocstories-cloze"],
        ["", "Choose the right ending of the story."],
        "LSDSem/story_cloze:2016",
    )
    items = [
        Item(
            f"{s}\nEnding 1: {e1}\nEnding 2: {e2}\nWhich ending is right?",
            lab,
            LABEL,
            {"sentence_quiz1": e1, "sentence_quiz2": e2},
        )
        for s, e1, e2, lab in _STORY_CLOZE
    ]
    return records(task, items)


_QQP = [
    ("How can I be a good geologist?", "What should I do to be a great geologist?", 1),
    ("How do I read and find my YouTube comments?", "How can I see all my Youtube comments?", 1),
    ("What is the best way to learn Spanish?", "What is the capital of Spain?", 0),
    ("Why do cats purr?", "What makes a cat purr?", 1),
    ("How do I bake bread at home?", "How do I fix a flat bicycle tire?", 0),
    ("What is web application?", "What is the difference between a web application and a website?", 0),
    ("How do I lose weight fast?", "What is the fastest way to lose weight?", 1),
    ("Which is the best laptop under $500?", "How do I install Windows on a Mac?", 0),
    ("What are the benefits of meditation?", "Why should I meditate?", 1),
    ("How tall is Mount Everest?", "Who first climbed Mount Everest?", 0),
]


def qqp(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "qqp",
        ["duplicate_questions", "glue-qqp"],
        ["Are the two questions duplicates? 0 = no, 1 = yes.", ""],
        "nyu-mll/glue:qqp",
    )
    items = [
        Item(
            f"question1: {a}\nquestion2: {b}\nAnswer 1 if they ask the same thing, else 0.",
            lab,
            LABEL,
            {"idx": i},
        )
        for i, (a, b, lab) in enumerate(_QQP)
    ]
    return records(task, items)


_COLA = [
    ("Our friends won't buy this analysis, let alone the next one we propose.", 1),
    ("One more pseudo generalization and I'm giving up.", 1),
    ("They drank the pub.", 0),
    ("The more we study verbs, the crazier they get.", 1),
    ("The car honked down the road.", 1),
    ("Bill whistled past the house the crowd.", 0),
    ("The sailors rode the breeze clear of the rocks.", 1),
    ("Fred watered the plants flat.", 1),
    ("Mary sang a song, but Lee never did.", 1),
    ("The book was written by John by Mary.", 0),
]


def cola(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "cola",
        ["grammatical_acceptability", "glue-cola"],
        ["", "Is the sentence grammatical?"],
        "nyu-mll/glue:cola",
    )
    items = [
        Item(f"Sentence: {s}\nLabel (0: unacceptable, 1: acceptable):", lab, LABEL, {"idx": i})
        for i, (s, lab) in enumerate(_COLA)
    ]
    return records(task, items)


_YELP = [
    (
        "dr. goldberg offers everything i look for in a general practitioner. he's nice and easy to talk to.",
        4,
    ),
    (
        "Unfortunately, the frustration of being Dr. Goldberg's patient is a repeat of the experience I've had with so many other doctors.",
        1,
    ),
    ("The food was okay, nothing special, and the service was slow.", 2),
    ("Worst pizza I have ever had. Cold, soggy and late.", 0),
    ("Good tacos and friendly staff, though parking is a pain.", 3),
    ("Absolutely perfect evening, the tasting menu was stunning.", 4),
    ("Decent coffee but the pastries were stale.", 1),
    ("Great service and the pasta was fresh, a bit pricey.", 3),
    ("Terrible hotel, dirty rooms and rude staff.", 0),
    ("It was fine. Average burgers.", 2),
]


def yelp_full(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "yelp_review_full",
        ["review_stars", "yelp-5-class"],
        ["Predict the star rating class.", ""],
        "Yelp/yelp_review_full",
    )
    items = [
        Item(f"Review: {t}\nOutput the label from 0 to 4 (0 = 1 star, 4 = 5 stars).", lab, LABEL)
        for t, lab in _YELP
    ]
    return records(task, items)


# -- span objects and item lists -------------------------------------------------------------------------------
_QUAC = [
    (
        "Section: Daffy Duck - Origin\nDaffy first appeared in Porky's Duck Hunt, released in 1937.\nQ: When did Daffy first appear?",
        {"texts": ["in 1937", "released in 1937"], "answer_starts": [52, 43]},
    ),
    (
        "Section: Ruth Ellis - Early life\nEllis was born in Rhyl, the fifth of six children.\nQ: Where was she born?",
        {"texts": ["Rhyl"], "answer_starts": [18]},
    ),
    (
        "Section: Anna Vissi - 1983-1989\nIn 1986 she released the album I Mera Ki I Nychta.\nQ: What album came out in 1986?",
        {"texts": ["I Mera Ki I Nychta"], "answer_starts": [32]},
    ),
    (
        "Section: The Fugees - Formation\nThe group was formed in New Jersey by Pras and Lauryn Hill.\nQ: Who formed the group?",
        {"texts": ["Pras and Lauryn Hill"], "answer_starts": [38]},
    ),
    (
        "Section: Leonard Cohen - Career\nHis first album, Songs of Leonard Cohen, came out in 1967.\nQ: What was his first album?",
        {"texts": ["Songs of Leonard Cohen"], "answer_starts": [17]},
    ),
    (
        "Section: Malcolm X - Prison\nIn prison he joined the Nation of Islam.\nQ: What did he join in prison?",
        {"texts": ["the Nation of Islam", "Nation of Islam"], "answer_starts": [20, 24]},
    ),
    (
        "Section: Nikola Tesla - Early years\nTesla was born in Smiljan in 1856.\nQ: When was he born?",
        {"texts": ["in 1856", "1856"], "answer_starts": [28, 31]},
    ),
    (
        "Section: Queen - Freddie Mercury\nMercury wrote Bohemian Rhapsody for the album A Night at the Opera.\nQ: Which album was it on?",
        {"texts": ["A Night at the Opera"], "answer_starts": [46]},
    ),
    (
        "Section: Frida Kahlo - Accident\nAt eighteen she was injured in a bus accident.\nQ: How was she injured?",
        {"texts": ["in a bus accident"], "answer_starts": [29]},
    ),
    (
        "Section: Pele - Santos\nHe signed with Santos at the age of fifteen.\nQ: How old was he?",
        {"texts": ["fifteen", "the age of fifteen"], "answer_starts": [37, 30]},
    ),
]


def quac(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "quac",
        ["question_answering_in_context", "quac-dialog"],
        ["", "Answer from the section."],
        "allenai/quac",
    )
    return records(
        task, [Item(q, r, SET_F1, {"dialogue_id": f"C_{i:04x}_1"}) for i, (q, r) in enumerate(_QUAC)]
    )


_QASPER = [
    (
        "Paper: BERT-based cross-lingual NER ... Question: Which languages do they evaluate on?",
        {"extractive_spans": ["Spanish", "Dutch", "German"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Neural summarization of meetings ... Question: What datasets are used?",
        {"extractive_spans": ["AMI", "ICSI"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Detecting sarcasm with context ... Question: Which baselines do they compare to?",
        {"extractive_spans": ["SVM", "CNN", "LSTM"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Low-resource MT with pivoting ... Question: What pivot language is used?",
        {"extractive_spans": ["English"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Graph attention for relation extraction ... Question: What metrics are reported?",
        {"extractive_spans": ["precision", "recall", "F1"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Data augmentation for intent detection ... Question: Which intents are hardest?",
        {"extractive_spans": ["book_flight", "cancel"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Contrastive sentence embeddings ... Question: Which encoders do they start from?",
        {"extractive_spans": ["BERT", "RoBERTa"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Multilingual hate speech detection ... Question: How many languages?",
        {"extractive_spans": [], "free_form_answer": "five", "yes_no": None},
    ),
    (
        "Paper: Speech translation without transcripts ... Question: Which corpora are used?",
        {"extractive_spans": ["MuST-C", "CoVoST"], "free_form_answer": "", "yes_no": None},
    ),
    (
        "Paper: Question generation for reading tests ... Question: Who rated the questions?",
        {"extractive_spans": ["teachers", "crowd workers"], "free_form_answer": "", "yes_no": None},
    ),
]


def qasper(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "qasper",
        ["paper_questions", "qasper-extractive"],
        ["Answer with the spans of the paper.", ""],
        "allenai/qasper",
    )
    return records(
        task, [Item(q, r, SET_F1, {"question_id": f"{i:040x}"}) for i, (q, r) in enumerate(_QASPER)]
    )


_SE_TAGS = [
    (
        "Title: How do I merge two dictionaries in a single expression?\nBody: I want to merge two dicts into a new dict ...",
        ["python", "dictionary", "merge"],
    ),
    (
        "Title: Pandas groupby with sum of multiple columns\nBody: I have a DataFrame and want to group by one column ...",
        ["python", "pandas", "dataframe", "group-by"],
    ),
    (
        "Title: Why does my React component render twice?\nBody: In development mode my useEffect runs twice ...",
        ["javascript", "reactjs", "react-hooks"],
    ),
    (
        "Title: Git: undo the last commit but keep the changes\nBody: I committed the wrong files ...",
        ["git", "git-commit", "undo"],
    ),
    (
        "Title: CSS flexbox center a div vertically\nBody: I cannot get my div to be centered ...",
        ["css", "flexbox", "centering"],
    ),
    (
        "Title: SQL query to find duplicate rows\nBody: I need all rows whose email appears twice ...",
        ["sql", "duplicates"],
    ),
    (
        "Title: Docker container exits immediately\nBody: My container stops right after docker run ...",
        ["docker", "dockerfile"],
    ),
    (
        "Title: Convert string to datetime in Java\nBody: I have '2021-03-04' and need a LocalDate ...",
        ["java", "datetime", "parsing"],
    ),
    (
        "Title: Rust borrow checker error in loop\nBody: cannot borrow as mutable more than once ...",
        ["rust", "borrow-checker"],
    ),
    (
        "Title: Bash loop over files with spaces\nBody: for f in $(ls) breaks on spaces ...",
        ["bash", "shell", "loops"],
    ),
]


def stackexchange_tags(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "stackexchange_tags",
        ["question_tagging", "so-tag-prediction"],
        ["", "Predict the question's tags."],
        "stackoverflow (title, body, tags)",
    )
    return records(task, [Item(f"{q}\nTags:", t, SET_F1) for q, t in _SE_TAGS])


_GO_EMOTIONS = [
    ("I'm so grateful you came, thank you!", ["gratitude", "joy"]),
    ("Ugh, this is so annoying and I'm sad it happened.", ["annoyance", "sadness"]),
    ("Wow, I did not see that coming! Amazing.", ["surprise", "admiration"]),
    ("I'm scared this will go wrong and I'm nervous.", ["fear", "nervousness"]),
    ("Haha that's hilarious, love it", ["amusement", "love"]),
    ("I don't care either way.", ["neutral"]),
    ("This is disgusting, I'm furious.", ["disgust", "anger"]),
    ("I hope you feel better soon, sending care.", ["caring", "optimism"]),
    ("I'm so confused, what does this even mean?", ["confusion", "curiosity"]),
    ("Sorry, that was my fault, I feel awful.", ["remorse", "sadness"]),
]


def go_emotions(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "go_emotions",
        ["multi_label_emotion", "goemotions-simplified"],
        ["List every emotion the comment expresses.", ""],
        "google-research-datasets/go_emotions",
    )
    return records(
        task, [Item(f"Comment: {c}\nEmotions (all that apply):", e, SET_F1) for c, e in _GO_EMOTIONS]
    )


# -- token tag sequences ---------------------------------------------------------------------------------------
_UD = [
    (["The", "cat", "sat", "on", "the", "mat", "."], ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]),
    (["She", "quickly", "read", "two", "books"], ["PRON", "ADV", "VERB", "NUM", "NOUN"]),
    (["Paris", "is", "beautiful", "in", "spring"], ["PROPN", "AUX", "ADJ", "ADP", "NOUN"]),
    (["We", "will", "not", "go", "there", "!"], ["PRON", "AUX", "PART", "VERB", "ADV", "PUNCT"]),
    (["Give", "me", "the", "red", "one"], ["VERB", "PRON", "DET", "ADJ", "NOUN"]),
    (["Oh", ",", "and", "he", "left", "early"], ["INTJ", "PUNCT", "CCONJ", "PRON", "VERB", "ADV"]),
    (["Dogs", "bark", "loudly"], ["NOUN", "VERB", "ADV"]),
    (["I", "have", "seen", "it"], ["PRON", "AUX", "VERB", "PRON"]),
    (["Three", "small", "birds", "sang"], ["NUM", "ADJ", "NOUN", "VERB"]),
    (["Is", "this", "your", "bag", "?"], ["AUX", "PRON", "PRON", "NOUN", "PUNCT"]),
]


def ud_pos(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "ud_pos",
        ["universal_word_classes", "ud-ewt-upos"],
        ["", "One universal POS tag per token."],
        "universal-dependencies/universal_dependencies:en_ewt",
    )
    return records(
        task,
        [
            Item("Tag the part of speech of each token: " + " ".join(t), u, SEQUENCE, {"tokens": t})
            for t, u in _UD
        ],
    )


_CHUNK_NAMES = [
    "O",
    "B-ADJP",
    "I-ADJP",
    "B-ADVP",
    "I-ADVP",
    "B-CONJP",
    "I-CONJP",
    "B-INTJ",
    "I-INTJ",
    "B-LST",
    "I-LST",
    "B-NP",
    "I-NP",
    "B-PP",
    "I-PP",
    "B-PRT",
    "I-PRT",
    "B-SBAR",
    "I-SBAR",
    "B-UCP",
    "I-UCP",
    "B-VP",
    "I-VP",
]
_CHUNKS = [
    (
        ["Confidence", "in", "the", "pound", "is", "widely", "expected"],
        ["B-NP", "B-PP", "B-NP", "I-NP", "B-VP", "I-VP", "I-VP"],
    ),
    (
        ["He", "reckons", "the", "current", "account", "deficit"],
        ["B-NP", "B-VP", "B-NP", "I-NP", "I-NP", "I-NP"],
    ),
    (["Chancellor", "Lawson", "declined", "to", "comment"], ["B-NP", "I-NP", "B-VP", "I-VP", "I-VP"]),
    (["The", "index", "fell", "sharply", "on", "Monday"], ["B-NP", "I-NP", "B-VP", "B-ADVP", "B-PP", "B-NP"]),
    (["Investors", "sold", "shares", "of", "banks"], ["B-NP", "B-VP", "B-NP", "B-PP", "B-NP"]),
    (["Prices", "rose", "in", "early", "trading"], ["B-NP", "B-VP", "B-PP", "B-NP", "I-NP"]),
    (["Rates", "are", "falling"], ["B-NP", "B-VP", "I-VP"]),
    (["The", "firm", "said", "it", "would", "sell"], ["B-NP", "I-NP", "B-VP", "B-NP", "B-VP", "I-VP"]),
    (["Sales", "grew", "in", "Asia"], ["B-NP", "B-VP", "B-PP", "B-NP"]),
    (["Analysts", "expect", "higher", "profits"], ["B-NP", "B-VP", "B-NP", "I-NP"]),
]


def conll2000_chunks(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "conll2000_chunking",
        ["shallow_parsing", "text-chunking"],
        ["Chunk tags (BIO) for every token.", ""],
        "eriktks/conll2000",
    )
    items = [
        Item(
            "Chunk this sentence, one tag per token: " + " ".join(t),
            [_CHUNK_NAMES.index(c) for c in tags],
            SEQUENCE,
            {"tokens": t, "tag_names": _CHUNK_NAMES},
        )
        for t, tags in _CHUNKS
    ]
    return records(task, items)


# -- target-only number games ----------------------------------------------------------------------------------
def krypto(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "krypto",
        ["krypto_card_game", "five-card-target-game"],
        ["", "Combine the cards to hit the target card."],
        "written-for-rlar (Krypto deals)",
    )
    items = []
    for _ in range(10):
        cards = [rng.randint(1, 17) for _ in range(5)]
        target = rng.randint(1, 25)
        items.append(
            Item(
                f"Krypto: cards {', '.join(map(str, cards))}. Using each card exactly once with + - * /, make {target}.",
                str(target),
                NONE,
                {"cards": cards},
            )
        )
    return records(task, items)


def make10(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "make10",
        ["train_ticket_game", "make-ten-puzzle"],
        ["Make 10 from the four digits.", ""],
        "written-for-rlar (make-10 puzzles)",
    )
    items = []
    for _ in range(10):
        digits = [rng.randint(1, 9) for _ in range(4)]
        items.append(
            Item(
                f"Use all four digits {' '.join(map(str, digits))} once each, with + - × ÷ and brackets, to reach 10.",
                10,
                NONE,
                {"digits": digits},
            )
        )
    return records(task, items)


# -- puzzle grids --------------------------------------------------------------------------------------------
def _latin(n: int, rng: random.Random) -> list[list[int]]:
    rows = [[(i + j) % n + 1 for j in range(n)] for i in range(n)]
    rng.shuffle(rows)
    perm = list(range(n))
    rng.shuffle(perm)
    return [[r[p] for p in perm] for r in rows]


def latin_squares(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "latin_square",
        ["latin_square_completion", "quasigroup-completion"],
        ["", "Complete the Latin square."],
        "written-for-rlar (Latin squares)",
    )
    items = []
    for i in range(10):
        grid = _latin(4 + i % 2, rng)
        shown = [[c if rng.random() < 0.5 else 0 for c in r] for r in grid]
        items.append(
            Item(
                "Complete the Latin square (0 = blank), every row and column holding each number once:\n"
                + "\n".join(" ".join(map(str, r)) for r in shown),
                grid,
                GRID,
            )
        )
    return records(task, items)


def takuzu(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "takuzu",
        ["binary_puzzle", "binairo"],
        ["Solve the binary puzzle; answer row by row.", ""],
        "written-for-rlar (takuzu grids)",
    )
    solutions = [
        "0101\n1010\n0110\n1001",
        "1100\n0011\n1010\n0101",
        "0110\n1001\n1010\n0101",
        "101010\n010101\n110010\n001101\n100110\n011001",
        "0011\n1100\n0101\n1010",
        "1001\n0110\n1010\n0101",
        "0101\n0110\n1010\n1001",
        "1010\n0101\n0011\n1100",
        "1100\n1010\n0011\n0101",
        "0110\n0101\n1001\n1010",
    ]
    items = []
    for s in solutions:
        shown = "\n".join("".join(c if rng.random() < 0.4 else "." for c in row) for row in s.splitlines())
        items.append(
            Item(
                f"Fill the grid with 0 and 1 (equal counts per row and column, no three alike in a row):\n{shown}",
                s,
                GRID,
            )
        )
    return records(task, items)


def kenken(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "kenken", ["calcudoku", "kenken-4x4"], ["", "Give the solved grid."], "written-for-rlar (KenKen)"
    )
    items = []
    for _ in range(10):
        grid = _latin(4, rng)
        cages = (
            f"cage (r1c1,r1c2) {grid[0][0] + grid[0][1]}+; cage (r2c1,r3c1) {grid[1][0] * grid[2][0]}x; ..."
        )
        solution = "\n".join("".join(map(str, r)) for r in grid)
        items.append(
            Item(f"Solve the 4x4 KenKen: {cages}\nWrite the solution as rows of digits.", solution, GRID)
        )
    return records(task, items)


# -- exact transformations -------------------------------------------------------------------------------------
_PLAIN = [
    "MEET ME AT NOON",
    "THE EAGLE HAS LANDED",
    "ATTACK AT DAWN",
    "KEEP THIS SECRET",
    "SEND MORE PAPER",
    "OPEN THE GATE",
    "HIDE THE MAP",
    "WAIT FOR THE SIGNAL",
    "THE BRIDGE IS OUT",
    "BRING TWO HORSES",
]


def _caesar(text: str, k: int) -> str:
    return "".join(chr((ord(c) - 65 + k) % 26 + 65) if c.isalpha() else c for c in text)


def caesar(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "caesar_cipher",
        ["caesar_decoding", "shift-cipher"],
        ["", "Decode the shifted text."],
        "written-for-rlar (Caesar shifts)",
    )
    items = []
    for p in _PLAIN:
        k = rng.randint(1, 25)
        items.append(
            Item(
                f"This text was encrypted with a Caesar shift of {k}: {_caesar(p, k)}\nWhat is the plaintext?",
                p,
                EXACT,
                {"shift": k},
            )
        )
    return records(task, items)


def rot13(rng: random.Random) -> list[dict[str, Any]]:
    task = Task("rot13", ["rot13_decode", "rot-13"], ["Apply ROT13.", ""], "written-for-rlar (ROT13)")
    words = [
        "Hello there friend",
        "The password is swordfish",
        "Why did the chicken cross the road",
        "Lunch is at twelve",
        "Bring an umbrella",
        "Never give up",
        "See you tomorrow",
        "The cake is in the oven",
        "Turn left at the church",
        "Pack warm socks",
    ]
    return records(
        task, [Item(f"Decode this ROT13 text: {codecs.encode(w, 'rot13')}", w, EXACT) for w in words]
    )


def atbash(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "atbash", ["atbash_cipher", "mirror-alphabet"], ["", "A=Z, B=Y, ..."], "written-for-rlar (Atbash)"
    )

    def enc(t: str) -> str:
        return "".join(chr(155 - ord(c)) if c.isalpha() else c for c in t)

    return records(task, [Item(f"Atbash ciphertext: {enc(p)}\nPlaintext:", p, EXACT) for p in _PLAIN])


def reverse_text(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "reverse_text",
        ["string_reversal", "backwards-letters"],
        ["Write the text backwards.", ""],
        "written-for-rlar (reversal)",
    )
    words = [
        "stressed",
        "drawer",
        "level headed",
        "palindrome test",
        "backwards text",
        "keyboard",
        "moonlight",
        "river stones",
        "quiet library",
        "sunflower",
    ]
    return records(task, [Item(f"Reverse the letters of: {w[::-1]}", w, EXACT) for w in words])


# -- quantities with units --------------------------------------------------------------------------------------
_CHEM = [
    ("How many moles are in 36 g of water (M = 18 g/mol)?", "2.0 mol"),
    ("What mass of NaCl is in 0.50 mol (M = 58.4 g/mol)?", "29.2 g"),
    ("A gas occupies 2.0 L at 100 kPa. At constant temperature, what is its volume at 200 kPa?", "1.0 L"),
    ("What volume of 2.0 M HCl contains 0.50 mol?", "250 mL"),
    ("How much heat raises 100 g of water by 10 K (c = 4.18 J/(g K))?", "4180 J"),
    ("What is the pressure of 1.0 mol of gas in 22.4 L at 273 K?", "101 kPa"),
    ("What is the mass of 3.0 mol of CO2 (M = 44 g/mol)?", "132 g"),
    ("How many moles of O2 are in 16 g (M = 32 g/mol)?", "0.50 mol"),
    ("What is the density of a 20 g sample of volume 5.0 mL?", "4.0 g/mL"),
    ("A balloon holds 3.0 L at 1 atm; what volume at 0.5 atm (same T)?", "6.0 L"),
]


def chemistry_units(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "chemistry_units",
        ["stoichiometry", "chem-quantities"],
        ["", "Give the answer with its unit."],
        "written-for-rlar (chemistry with units)",
    )
    return records(task, [Item(q, a, QUANTITY) for q, a in _CHEM])


_CIRCUITS = [
    ("A 12 V battery drives a 4 ohm resistor. What current flows?", "3 A"),
    ("What is the resistance of two 100 ohm resistors in parallel?", "50 ohm"),
    ("A 2 A current flows through 6 ohm. What is the voltage drop?", "12 V"),
    ("What power does a 230 V heater draw at 10 A?", "2.3 kW"),
    ("How much charge passes in 5 s at 0.4 A?", "2 C"),
    ("A 60 W bulb runs for 2 hours. How much energy does it use?", "432 kJ"),
    ("A 9 V source and 3 mA current: what resistance?", "3 kohm"),
    ("What frequency has a period of 20 ms?", "50 Hz"),
    ("Three 10 ohm resistors in series have what total resistance?", "30 ohm"),
    ("A 1500 W kettle runs for 2 minutes. Energy used?", "180 kJ"),
]


def circuits_units(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "circuits_units",
        ["electric_circuits", "ohms-law-problems"],
        ["Circuit problems; state the unit.", ""],
        "written-for-rlar (circuits with units)",
    )
    return records(task, [Item(q, a, QUANTITY) for q, a in _CIRCUITS])


# -- reference-free verse forms --------------------------------------------------------------------------------
_FORMS = [
    (
        "haiku",
        "Write a haiku about the first snow.",
        "Write a haiku (5-7-5 syllables) about a heron.",
        "Compose a haiku about city traffic.",
    ),
    (
        "acrostic",
        "Write an acrostic poem for the word HOPE.",
        "Write an acrostic poem whose lines spell RIVER.",
        "Compose an acrostic on the name ANNA.",
    ),
    (
        "villanelle",
        "Write a villanelle about insomnia.",
        "Compose a villanelle with the refrain 'the tide will not return'.",
        "Write a villanelle about a lighthouse keeper.",
    ),
    (
        "couplets",
        "Write three rhyming couplets about a lazy dog.",
        "Write a poem in rhyming couplets about breakfast.",
        "Compose four couplets that rhyme, about rain.",
    ),
]


def verse_forms(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "verse_forms",
        ["poetry_in_a_form", "fixed-form-poems"],
        ["", "Write the poem in the requested form."],
        "written-for-rlar (verse forms)",
    )
    items = [
        Item(q, "" if i % 2 else None, JUDGE) for i, q in enumerate(q for row in _FORMS for q in row[1:])
    ]
    return records(task, items)


ALL = [
    siqa,
    copa,
    story_cloze,
    qqp,
    cola,
    yelp_full,
    quac,
    qasper,
    stackexchange_tags,
    go_emotions,
    ud_pos,
    conll2000_chunks,
    krypto,
    make10,
    latin_squares,
    takuzu,
    kenken,
    caesar,
    rot13,
    atbash,
    reverse_text,
    chemistry_units,
    circuits_units,
    verse_forms,
]
