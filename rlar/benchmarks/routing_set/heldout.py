"""Writes data/routing/heldout_unseen.jsonl (`python -m rlar.benchmarks.routing_set.heldout`): 24 task formats the labelled
set does not have, references as the source datasets ship them. Written before the router learned these
shapes and measured unseen (docs/benchmarks.md, "Routing, unseen formats"); since then its records are exemplars of
the labelled set (``rlar.benchmarks.routing_set.measured``), as every measured held-out set's are."""

import collections
import json
from pathlib import Path
from typing import Any

rows: list[dict[str, Any]] = []


def add(type_, source, task, items, desc=""):
    for i, (query, ref, acc, meta) in enumerate(items):
        rows.append(
            {
                "id": f"{type_}-{i + 1:03d}",
                "type": type_,
                "task": task,
                "domain": "",
                "task_type": "",
                "answer_format": "",
                "description": desc if i % 2 == 0 else "",
                "data_source": source,
                "query": query,
                "reference": ref,
                "metadata": meta,
                "acceptable": acc,
            }
        )


EM = ["exact_match", "normalized_match"]
# 1 Winogrande: option "1"/"2"
W = [
    ("The trophy doesn't fit into the brown suitcase because the _ is too large.", "trophy", "suitcase", "1"),
    ("Sarah was a much better surgeon than Maria so _ always got the harder cases.", "Sarah", "Maria", "1"),
    ("The man couldn't lift his son because the _ was so weak.", "man", "son", "1"),
    (
        "Kyle doesn't wear leg warmers to bed, while Logan almost always does. _ is more likely to live in a colder climate.",
        "Kyle",
        "Logan",
        "2",
    ),
]
add(
    "winogrande",
    "allenai/winogrande:winogrande_xl",
    "pronoun_fill_in",
    [
        (
            f"{s}\nOption 1: {a}\nOption 2: {b}\nWhich option fills the blank? Answer 1 or 2.",
            ans,
            EM,
            {"option1": a, "option2": b},
        )
        for s, a, b, ans in W
    ],
    "Fill the blank with the right option.",
)
# 2 PIQA: label int 0/1
P = [
    (
        "How do I ready a guinea pig cage for it's new occupants?",
        "Provide the guinea pig with a cage full of a few inches of bedding made of ripped paper strips, you will also need to supply it with a water bottle and a food dish.",
        "Provide the guinea pig with a cage full of a few inches of bedding made of ripped jeans material, you will also need to supply it with a water bottle and a food dish.",
        0,
    ),
    (
        "To remove a stripped screw,",
        "place a wide rubber band between the screwdriver and the screw head, then turn slowly.",
        "place a wide rubber band around the screwdriver handle, then turn slowly.",
        0,
    ),
    (
        "How can I keep cut avocado from browning?",
        "Store it with the pit removed in an open bowl.",
        "Brush the cut surface with lemon juice and wrap it tightly.",
        1,
    ),
]
add(
    "piqa",
    "ybisk/piqa",
    "physical_commonsense",
    [
        (
            f"Goal: {g}\nSolution 0: {s1}\nSolution 1: {s2}\nWhich solution is more appropriate? Reply with 0 or 1.",
            lab,
            EM,
            {"sol1": s1, "sol2": s2},
        )
        for g, s1, s2, lab in P
    ],
)
# 3 RTE (GLUE): label int, 0 entailment / 1 not_entailment
R = [
    ("No Weapons of Mass Destruction Found in Iraq Yet.", "Weapons of Mass Destruction Found in Iraq.", 1),
    (
        "A place of sorrow, after Pope John Paul II died, became a place of celebration, as Roman Catholic faithful gathered in downtown Chicago to mark the installation of new Pope Benedict XVI.",
        "Pope Benedict XVI is the new leader of the Roman Catholic Church.",
        0,
    ),
    (
        "Herceptin was already approved to treat the sickest breast cancer patients, and the company said, Monday, it will discuss with federal regulators the possibility of prescribing the drug for more breast cancer patients.",
        "Herceptin can be used to treat breast cancer.",
        0,
    ),
]
add(
    "glue_rte",
    "nyu-mll/glue:rte",
    "textual_entailment",
    [
        (
            f"sentence1: {a}\nsentence2: {b}\nLabel 0 = entailment, 1 = not_entailment. Label:",
            lab,
            EM,
            {"idx": i},
        )
        for i, (a, b, lab) in enumerate(R)
    ],
    "Two-class entailment.",
)
# 4 SST-5: label 0..4
S5 = [
    ("A gorgeous, witty, seductive movie.", 4),
    ("The plot is nothing but boilerplate clichés from start to finish.", 0),
    ("It's a fairly ordinary thriller with a couple of good scenes.", 2),
    ("Not a bad way to spend an afternoon, though it drags a little.", 3),
]
add(
    "sst5",
    "SetFit/sst5",
    "fine_grained_sentiment",
    [
        (
            f"Rate the sentiment of this review on a scale of 0 (very negative) to 4 (very positive).\nReview: {t}\nRating:",
            lab,
            EM,
            {"label_text": ["very negative", "negative", "neutral", "positive", "very positive"][lab]},
        )
        for t, lab in S5
    ],
)
# 5 DROP: answers_spans objects
D = [
    (
        "Passage: The Raiders' first score came on a 32-yard field goal by Sebastian Janikowski. Oakland then scored on a 2-yard run by Justin Fargas, and Janikowski added a 45-yard field goal before halftime.\nQuestion: Who scored the first touchdown of the game?",
        {"spans": ["Justin Fargas"], "types": ["span"]},
    ),
    (
        "Passage: In 1970 the census counted 12,345 households; by 1980 the number had grown to 15,020.\nQuestion: How many more households were there in 1980 than in 1970?",
        {"spans": ["2675"], "types": ["number"]},
    ),
    (
        "Passage: The army was led by generals Ahmed Pasha and Mustafa Bey, while the fleet was under Admiral Hasan.\nQuestion: Which generals led the army?",
        {"spans": ["Ahmed Pasha", "Mustafa Bey"], "types": ["span", "span"]},
    ),
]
add(
    "drop",
    "ucinlp/drop",
    "discrete_reasoning_over_paragraphs",
    [(q, r, ["set_f1"], {"section_id": f"nfl_{i}"}) for i, (q, r) in enumerate(D)],
)
# 6 CoQA: answer objects
C = [
    (
        "Story: Once upon a time, in a barn near a farm house, there lived a little white kitten named Cotton.\nQ: What color was Cotton?",
        {"input_text": "white", "answer_start": 59, "answer_end": 93},
    ),
    (
        "Story: Cotton lived high up in a nice warm place above the barn where all of the farmer's horses slept.\nQ: Where did she live?",
        {"input_text": "in a barn", "answer_start": 18, "answer_end": 80},
    ),
    (
        "Story: The Vatican Apostolic Library is the library of the Holy See, located in Vatican City. Formally established in 1475, it is one of the oldest libraries in the world.\nQ: When was the Vat formally opened?",
        {"input_text": "It was formally established in 1475", "answer_start": 94, "answer_end": 124},
    ),
]
add("coqa", "stanfordnlp/coqa", "conversational_qa", [(q, r, ["set_f1"], {"source": "mctest"}) for q, r in C])
# 7 WebQuestions: answer lists
WQ = [
    ("what does jamaican people speak?", ["Jamaican English", "Jamaican Creole English Language"]),
    ("what did james k polk do before he was president?", ["Lawyer", "Farmer", "Politician"]),
    ("where is the fukushima daiichi nuclear plant located?", ["Japan", "Okuma"]),
]
add(
    "webquestions",
    "Stanford/web_questions",
    "freebase_questions",
    [
        (
            q,
            a,
            ["set_f1", "normalized_match", "contains_match"],
            {"url": "http://www.freebase.com/view/en/" + q.split()[-1].strip("?")},
        )
        for q, a in WQ
    ],
)
# 8 KP20k keyphrases
K = [
    (
        "Title: A feedback vertex set of 2-degenerate graphs\nAbstract: A feedback vertex set of a graph G is a set S of its vertices such that the subgraph induced by V(G)-S is a forest. We show that every 2-degenerate graph with n vertices has a feedback vertex set of size at most ... \nList the keyphrases of this paper.",
        ["feedback vertex set", "degenerate graphs", "planar graphs", "decycling number"],
    ),
    (
        "Title: Adaptive load balancing for peer-to-peer systems\nAbstract: We propose an adaptive scheme that redistributes load among peers using virtual servers ... \nKeyphrases:",
        ["load balancing", "peer-to-peer", "virtual servers", "distributed hash table"],
    ),
    (
        "Title: Learning sparse codes for image denoising\nAbstract: Sparse coding with learned dictionaries achieves state-of-the-art results ... \nGive the paper's keyphrases, separated by semicolons.",
        ["sparse coding", "dictionary learning", "image denoising"],
    ),
]
add(
    "kp20k",
    "memray/kp20k",
    "keyphrase_generation",
    [(q, k, ["set_f1"], {}) for q, k in K],
    "Generate the keyphrases of a scientific paper.",
)
# 9 CoNLL-2003 NER tags (ints)
NER = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
CN = [
    (
        ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
        [3, 0, 7, 0, 0, 0, 7, 0, 0],
    ),
    (["Peter", "Blackburn"], [1, 2]),
    (["BRUSSELS", "1996-08-22"], [5, 0]),
]
add(
    "conll2003",
    "eriktks/conll2003",
    "named_entity_tagging",
    [
        (
            "Tag each token with its NER tag.\nTokens: " + " ".join(t),
            tags,
            ["sequence_match"],
            {"tokens": t, "tag_names": NER},
        )
        for t, tags in CN
    ],
)
# 10 WikiANN NER (ints, with spans)
WA = [
    (["Abraham", "Lincoln", "was", "born", "in", "Kentucky", "."], [1, 2, 0, 0, 0, 5, 0]),
    (["Sony", "opened", "a", "store", "in", "Berlin"], [3, 0, 0, 0, 0, 5]),
    (["Marie", "Curie", "worked", "at", "the", "Sorbonne"], [1, 2, 0, 0, 0, 3]),
]
WAN = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
add(
    "wikiann",
    "unimelb-nlp/wikiann:en",
    "ner_wiki",
    [
        (
            "Label the entities (PER, ORG, LOC) in BIO format, one tag per token: " + " ".join(t),
            tags,
            ["sequence_match"],
            {"tokens": t, "langs": ["en"] * len(t)},
        )
        for t, tags in WA
    ],
)
# 11 Game of 24: reference is the target
G = ["4 7 8 8", "1 2 3 4", "3 3 8 8"]
add(
    "game24",
    "nlile/24-game",
    "make_24",
    [
        (
            f"Use the numbers {g} and basic arithmetic operations (+ - * /) to obtain 24. Each number must be used exactly once.",
            "24",
            [],
            {"numbers": g},
        )
        for g in G
    ],
)
# 12 Countdown: target number with nums
CD = [([44, 19, 35], 98), ([2, 55, 9, 48], 83), ([95, 21, 3], 88)]
add(
    "countdown",
    "Jiayi-Pan/Countdown-Tasks-3to4",
    "countdown_numbers",
    [
        (
            f"Using the numbers {n}, create an equation that equals {t}. You can use basic arithmetic operations (+, -, *, /) and each number can only be used once. Show your work in <think> </think> tags and return the final equation in <answer> </answer> tags.",
            t,
            [],
            {"nums": n},
        )
        for n, t in CD
    ],
)
# 13 Sudoku: 81-digit solution strings
SU = [
    (
        "530070000600195000098000060800060003400803001700020006060000280000419005000080079",
        "534678912672195348198342567859761423426853791713924856961537284287419635345286179",
    ),
    (
        "003020600900305001001806400008102900700000008006708200002609500800203009005010300",
        "483921657967345821251876493548132976729564138136798245372689514814253769695417382",
    ),
    (
        "200080300060070084030500209000105408000000000402706000301007040720040060004010003",
        "245981376169273584837564219976125438513498627482736951391657842728349165654812793",
    ),
]
add(
    "sudoku",
    "sapientinc/sudoku-extreme",
    "sudoku_solving",
    [
        (
            f"Solve this Sudoku (0 = empty, row by row):\n{p}\nGive the completed grid as 81 digits.",
            s,
            ["sequence_match", "exact_match", "normalized_match"],
            {"puzzle": p},
        )
        for p, s in SU
    ],
)
# 14 Mini crossword grids
MC = [
    (
        "Solve the 3x3 mini crossword.\nAcross: 1. Feline pet 4. Exist 5. Number after nine\nDown: 1. Automobile 2. Region 3. Opposite of bottom... (letters row by row)",
        "CAT\nARE\nTEN",
    ),
    (
        "5x5 mini crossword. Fill the grid and give it row by row.\nAcross: 1. Lofty 6. ... ",
        "ABOVE\nLOWER\nIRATE\nENTER\nNESTS",
    ),
    (
        "Fill in this 4x4 crossword grid and return the rows.\nAcross: 1. Slightly open 5. Hawaiian dance ...",
        "AJAR\nHULA\nASKS\nBEST",
    ),
]
add(
    "mini_crossword",
    "written-for-rlar-heldout (crossword grids)",
    "crossword_grid",
    [(q, a, ["sequence_match", "exact_match", "normalized_match"], {}) for q, a in MC],
)
# 15 Vigenere decoding
V = [
    ("LXFOPVEFRNHR", "LEMON", "ATTACKATDAWN"),
    ("RIJVSUYVJN", "KEY", "HELLOWORLD"),
    ("ZVQRFXCALBWZPQBNWIBQQIFNHIM", "LION", "ONCEUPONATIMEINALANDFARAWAY"),
]
add(
    "vigenere",
    "written-for-rlar-heldout (cipher decoding)",
    "vigenere_decrypt",
    [(f"Decrypt the Vigenère ciphertext {c} with the key {k}.", p, EM, {"key": k}) for c, k, p in V],
    "Decode the ciphertext.",
)
# 16 Morse decoding
MO = [
    (".... . .-.. .-.. --- / .-- --- .-. .-.. -..", "HELLO WORLD"),
    ("... --- ...", "SOS"),
    ("- .... . / --.- ..- .. -.-. -.- / ..-. --- -..-", "THE QUICK FOX"),
]
add(
    "morse",
    "written-for-rlar-heldout (morse code)",
    "morse_to_text",
    [(f"Translate this Morse code into text: {m}", p, EM, {}) for m, p in MO],
)
# 17 SciBench-style physics answers with units
SB = [
    ("A spring with constant 200 N/m is compressed by a 8.0 N force. How far is it compressed?", "4.0 cm"),
    ("A car accelerates uniformly from rest to 30 m/s in 6.0 s. What is its acceleration?", "5.0 m/s^2"),
    (
        "A stone is dropped from a 45 m cliff. With g = 10 m/s^2, how fast is it moving when it hits the ground?",
        "30 m/s",
    ),
]
add(
    "physics_units",
    "xw27/scibench (physics, answers with units)",
    "physics_numeric",
    [(q, a, ["quantity_match"], {"unit_given": True}) for q, a in SB],
)
# 18 Unit conversion
UC = [
    ("Convert 3.5 km to metres.", "3500 m"),
    ("How many grams are in 2.25 kg?", "2250 g"),
    ("Express 90 km/h in m/s.", "25 m/s"),
]
add(
    "unit_conversion",
    "written-for-rlar-heldout (unit conversion)",
    "convert_units",
    [(q, a, ["quantity_match"], {}) for q, a in UC],
)
# 19 Limericks: no reference, a stated form
L = [
    "Write a limerick about a cat who learns to code.",
    "Compose a limerick (AABBA rhyme scheme) about a forgetful wizard.",
    "Write a limerick about Monday mornings.",
]
add(
    "limericks",
    "written-for-rlar-heldout (poem forms)",
    "limerick_writing",
    [(q, "", ["llm_judge"], {}) for q in L],
)
# 20 Sonnets / rhyme schemes
SO = [
    "Write a Shakespearean sonnet about the sea, with the rhyme scheme ABAB CDCD EFEF GG.",
    "Write a four-line poem about autumn with an ABAB rhyme scheme.",
    "Write a Petrarchan sonnet about a city at night in iambic pentameter.",
]
add(
    "rhyme_scheme_poems",
    "written-for-rlar-heldout (poem forms)",
    "formal_poetry",
    [(q, None, ["llm_judge"], {}) for q in SO],
)
# 21 BBH navigate
N = [
    (
        "If you follow these instructions, do you return to the starting point? Take 1 step. Take 2 steps. Take 3 steps. Turn around. Take 6 steps.\nOptions:\n- Yes\n- No",
        "Yes",
    ),
    (
        "If you follow these instructions, do you return to the starting point? Always face forward. Take 2 steps left. Take 4 steps backward.\nOptions:\n- Yes\n- No",
        "No",
    ),
    (
        "If you follow these instructions, do you return to the starting point? Turn left. Take 5 steps. Turn around. Take 5 steps.\nOptions:\n- Yes\n- No",
        "Yes",
    ),
]
add("bbh_navigate", "lukaemon/bbh:navigate", "bbh_navigate", [(q, a, EM, {}) for q, a in N])
# 22 BBH object counting
OC = [
    (
        "I have a flute, a piano, a trombone, four stoves, a violin, an accordion, a clarinet, a drum, two lamps, and a trumpet. How many musical instruments do I have?",
        "8",
    ),
    (
        "I have a chair, two potatoes, a cauliflower, a lettuce head, two tables, a cabbage, two onions, and three fridges. How many vegetables do I have?",
        "8",
    ),
    ("I have a peach, an apple, two bananas, and a plum. How many fruits do I have?", "5"),
]
add(
    "bbh_object_counting",
    "lukaemon/bbh:object_counting",
    "bbh_object_counting",
    [(q, a, ["math_verify", "exact_match", "normalized_match"], {}) for q, a in OC],
)
# 23 BBH boolean expressions
BE = [
    ("not ( ( not not True ) ) is", "False"),
    ("True and False and not True and True is", "False"),
    ("not not ( not ( False ) ) is", "True"),
]
add(
    "bbh_boolean_expressions",
    "lukaemon/bbh:boolean_expressions",
    "bbh_boolean_expressions",
    [(f"Evaluate the result of a random Boolean expression.\n\nQ: {q}\nA:", a, EM, {}) for q, a in BE],
)
# 24 MathQA: lowercase option letters, options in one string
MQ = [
    (
        "the banker's gain of a certain sum due 3 years hence at 10 % per annum is rs . 36 . what is the present worth ?",
        "a ) rs . 400 , b ) rs . 300 , c ) rs . 500 , d ) rs . 350 , e ) none of these",
        "a",
    ),
    (
        "average age of students of an adult school is 40 years . 120 new students whose average age is 32 years joined the school . as a result the average age is decreased by 4 years . find the number of students of the school after joining of the new students .",
        "a ) 1200 , b ) 120 , c ) 360 , d ) 240 , e ) none of these",
        "d",
    ),
    (
        "sophia finished 2 / 3 of a book . she calculated that she finished 90 more pages than she has yet to read . how long is her book ?",
        "a ) 229 , b ) 270 , c ) 877 , d ) 266 , e ) 281",
        "b",
    ),
]
add(
    "mathqa",
    "allenai/math_qa",
    "math_word_mc",
    [(f"{p}\nOptions: {o}", a, EM, {"options": o, "category": "gain"}) for p, o, a in MQ],
)
open(
    Path(__file__).resolve().parents[3] / "data" / "routing" / "heldout_unseen.jsonl", "w", encoding="utf-8"
).write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
print(len(rows), len(collections.Counter(r["type"] for r in rows)))
