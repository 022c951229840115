"""Short canonical answers: multiple-choice letters and indices, class labels, extracted spans, factoid QA
(SQuAD, TriviaQA, NQ-open, HotpotQA, WikiTableQuestions, XQuAD), documents' fields, string puzzles."""

from __future__ import annotations

import random
from typing import Any

from rlar.benchmarks.routing_set.common import CHOICE, LABEL, MATH, SPAN, Item, Task, records

LETTERS = "ABCDE"


def _mc(question: str, options: list[str], style: int) -> str:
    if style == 0:
        return question + "\n" + "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options)) + "\nAnswer:"
    if style == 1:
        return question + "\n" + " ".join(f"({LETTERS[i]}) {o}" for i, o in enumerate(options))
    return (
        f"Question: {question}\nChoices:\n"
        + "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(options))
        + "\nRespond with the letter of the correct choice."
    )


_MMLU = [
    (
        "high_school_biology",
        "Which organelle is the site of aerobic respiration in eukaryotic cells?",
        ["Ribosome", "Mitochondrion", "Golgi apparatus", "Lysosome"],
        1,
    ),
    (
        "us_foreign_policy",
        "The Marshall Plan was primarily intended to",
        [
            "contain Soviet expansion in Asia",
            "rebuild the economies of Western Europe",
            "establish the United Nations",
            "end the Korean War",
        ],
        1,
    ),
    (
        "college_physics",
        "A ball is dropped from rest. Ignoring air resistance, its speed after 2 s is closest to",
        ["5 m/s", "10 m/s", "20 m/s", "40 m/s"],
        2,
    ),
    (
        "professional_law",
        "Which of the following is required for a valid contract?",
        ["A written document", "Consideration", "A notary", "A witness"],
        1,
    ),
    (
        "high_school_macroeconomics",
        "An increase in the money supply will most likely",
        ["raise interest rates", "lower interest rates", "reduce inflation", "reduce aggregate demand"],
        1,
    ),
    ("anatomy", "Which bone is the longest in the human body?", ["Humerus", "Tibia", "Femur", "Fibula"], 2),
    ("philosophy", "Who wrote 'Critique of Pure Reason'?", ["Hume", "Kant", "Hegel", "Descartes"], 1),
    (
        "computer_security",
        "What does a salt protect against in password hashing?",
        ["Keyloggers", "Precomputed rainbow tables", "Phishing", "Buffer overflows"],
        1,
    ),
    (
        "world_religions",
        "The Five Pillars are central to which religion?",
        ["Buddhism", "Hinduism", "Islam", "Sikhism"],
        2,
    ),
    ("astronomy", "Which planet has the shortest orbital period?", ["Venus", "Mercury", "Mars", "Earth"], 1),
    (
        "nutrition",
        "Which vitamin is produced in the skin with sunlight?",
        ["Vitamin A", "Vitamin C", "Vitamin D", "Vitamin K"],
        2,
    ),
    (
        "marketing",
        "Segmenting a market by lifestyle and values is called",
        ["demographic", "geographic", "psychographic", "behavioral"],
        2,
    ),
]


def mmlu(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "mmlu",
        ["massive_multitask_eval", "mmlu-5shot", "knowledge_mc"],
        ["", "Pick one of the four options.", "Academic knowledge questions with four options."],
        "cais/mmlu",
    )
    items = [
        Item(_mc(q, opts, i % 3), LETTERS[a], CHOICE, {"subject": subj, "choices": opts})
        for i, (subj, q, opts, a) in enumerate(_MMLU)
    ]
    return records(task, items)


_ARC = [
    (
        "Which of these would help to prevent erosion of soil?",
        ["planting grass", "removing trees", "plowing fields", "building roads"],
        0,
    ),
    (
        "A student mixes baking soda and vinegar and bubbles form. What do the bubbles show?",
        ["a physical change", "a chemical reaction", "melting", "evaporation"],
        1,
    ),
    (
        "Which property of a mineral can be determined just by looking at it?",
        ["luster", "mass", "hardness", "weight"],
        0,
    ),
    (
        "What is the main source of energy for the water cycle?",
        ["wind", "the Sun", "the ocean", "gravity"],
        1,
    ),
    (
        "Which tool should be used to measure the volume of a liquid?",
        ["ruler", "balance", "graduated cylinder", "thermometer"],
        2,
    ),
    ("Which of the following is a renewable resource?", ["coal", "natural gas", "oil", "wind"], 3),
    (
        "What causes day and night on Earth?",
        ["Earth's revolution", "Earth's rotation", "the Moon's phases", "the tilt of the Sun"],
        1,
    ),
    ("A frog is an example of which kind of animal?", ["mammal", "reptile", "amphibian", "bird"], 2),
    (
        "Which layer of Earth is made of liquid iron and nickel?",
        ["crust", "mantle", "outer core", "inner core"],
        2,
    ),
    ("Which form of energy is stored in food?", ["chemical", "nuclear", "sound", "light"], 0),
    ("Why do astronauts weigh less on the Moon?", ["less air", "less gravity", "less mass", "more light"], 1),
]


def arc(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "arc",
        ["ai2_science_challenge", "grade-school-science-mc"],
        ["Grade-school science questions.", ""],
        "allenai/ai2_arc:ARC-Challenge",
    )
    items = []
    for i, (q, opts, a) in enumerate(_ARC):
        labels = list("1234") if i % 4 == 3 else list("ABCD")
        query = q + "\n" + "\n".join(f"{labels[j]}: {o}" for j, o in enumerate(opts))
        acc = CHOICE  # a letter or an option index: a string match (not math equivalence)
        items.append(Item(query, labels[a], acc, {"choices": {"text": opts, "label": labels}}))
    return records(task, items)


_HELLASWAG = [
    (
        "Removing ice from car",
        "Then, the man writes over the snow covering the window of a car, and a woman wearing winter clothes smiles. then",
        [
            ", the man adds wax to the windshield and cuts it.",
            ", a person board a ski lift, while two men supporting the head of the person wearing winter clothes snow as the we girls sled.",
            ", the man puts on a christmas coat, knitted with netting.",
            ", the man continues removing the snow on his car.",
        ],
        3,
    ),
    (
        "Baking cookies",
        "A woman is standing in a kitchen with a bowl of dough. She",
        [
            "rolls the dough into small balls and places them on a baking sheet.",
            "throws the bowl out of the window.",
            "starts painting the wall blue.",
            "jumps into a swimming pool.",
        ],
        0,
    ),
    (
        "Playing guitar",
        "A boy sits on a couch holding a guitar. He",
        [
            "eats the guitar strings.",
            "strums a few chords and adjusts the tuning pegs.",
            "plants the guitar in the garden.",
            "mails the couch to his aunt.",
        ],
        1,
    ),
    (
        "Washing dishes",
        "A man turns on the faucet and fills the sink with soapy water. He",
        [
            "dries his hair with the towel.",
            "places the dirty plates in the water and scrubs them.",
            "drives to the airport.",
            "reads the newspaper to the plates.",
        ],
        1,
    ),
    (
        "Walking the dog",
        "A woman clips a leash onto her dog's collar. She",
        [
            "opens the door and walks outside with the dog.",
            "feeds the leash to the cat.",
            "starts a chess match.",
            "repaints the dog.",
        ],
        0,
    ),
    (
        "Changing a tire",
        "A man loosens the lug nuts on the flat tire. Next he",
        [
            "jacks up the car and removes the wheel.",
            "bakes a pie in the trunk.",
            "sings to the tire.",
            "files his taxes.",
        ],
        0,
    ),
    (
        "Making tea",
        "A woman pours hot water into a cup with a tea bag. She",
        [
            "lets it steep for a few minutes before removing the bag.",
            "freezes the cup immediately.",
            "plants the tea bag.",
            "throws the cup at the wall.",
        ],
        0,
    ),
    (
        "Skateboarding",
        "A teenager places his skateboard at the top of the ramp. He",
        [
            "drops in and rolls down the ramp.",
            "folds the ramp into a paper crane.",
            "eats his skateboard.",
            "calls a plumber.",
        ],
        0,
    ),
    (
        "Brushing teeth",
        "A girl squeezes toothpaste onto her toothbrush. She",
        [
            "brushes the dog's fur with it.",
            "brushes her teeth in small circles.",
            "plants the toothbrush in a pot.",
            "writes a letter with it.",
        ],
        1,
    ),
    (
        "Ironing clothes",
        "A man lays a wrinkled shirt on the ironing board. He",
        [
            "irons the shirt until it is smooth.",
            "cooks pancakes on the board.",
            "throws the iron into a lake.",
            "paints the shirt red.",
        ],
        0,
    ),
    (
        "Rock climbing",
        "A climber chalks her hands at the base of the wall. She",
        [
            "grabs the first hold and starts to climb.",
            "eats the chalk bag.",
            "lies down for a nap on the floor.",
            "drives the wall home.",
        ],
        0,
    ),
]


def hellaswag(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "hellaswag",
        ["sentence_completion_commonsense", "hs-val"],
        ["", "Choose the most plausible ending (0-3)."],
        "Rowan/hellaswag",
    )
    items = []
    for i, (activity, ctx, endings, label) in enumerate(_HELLASWAG):
        q = (
            f"{activity}: {ctx}\n"
            + "\n".join(f"{j}) {e.strip()}" for j, e in enumerate(endings))
            + "\nAnswer with the number of the best ending."
        )
        items.append(
            Item(
                q,
                str(label),
                CHOICE,
                {"activity_label": activity, "endings": endings, "ind": i},
            )
        )
    return records(task, items)


_MEDQA = [
    (
        "A 23-year-old woman presents with fatigue and pallor. Labs show microcytic anemia and low ferritin. What is the most likely diagnosis?",
        [
            "Vitamin B12 deficiency",
            "Iron deficiency anemia",
            "Sickle cell disease",
            "Aplastic anemia",
            "Hemolytic anemia",
        ],
        1,
    ),
    (
        "A 60-year-old man has crushing chest pain radiating to the left arm. Which test should be performed first?",
        ["Chest X-ray", "Echocardiogram", "Electrocardiogram", "Cardiac MRI", "Stress test"],
        2,
    ),
    (
        "Which drug is first-line for uncomplicated hypertension in a patient with diabetes and proteinuria?",
        ["Beta blocker", "ACE inhibitor", "Loop diuretic", "Alpha blocker", "Hydralazine"],
        1,
    ),
    (
        "A child has a barking cough and inspiratory stridor. What is the most likely cause?",
        ["Epiglottitis", "Croup", "Asthma", "Pneumonia", "Foreign body"],
        1,
    ),
    (
        "Deficiency of which vitamin causes scurvy?",
        ["Vitamin A", "Vitamin B1", "Vitamin C", "Vitamin D", "Vitamin K"],
        2,
    ),
    (
        "A patient with a positive Babinski sign most likely has a lesion in which structure?",
        [
            "Peripheral nerve",
            "Upper motor neuron",
            "Neuromuscular junction",
            "Muscle",
            "Dorsal root ganglion",
        ],
        1,
    ),
    (
        "Which electrolyte abnormality causes peaked T waves?",
        ["Hypokalemia", "Hyperkalemia", "Hyponatremia", "Hypercalcemia", "Hypomagnesemia"],
        1,
    ),
    (
        "Which organism most commonly causes community-acquired pneumonia in adults?",
        ["Staphylococcus aureus", "Streptococcus pneumoniae", "Klebsiella", "Pseudomonas", "Legionella"],
        1,
    ),
    (
        "What is the antidote for acetaminophen overdose?",
        ["Naloxone", "Flumazenil", "N-acetylcysteine", "Atropine", "Vitamin K"],
        2,
    ),
    (
        "A woman has heat intolerance, weight loss and exophthalmos. What is the most likely diagnosis?",
        [
            "Hashimoto thyroiditis",
            "Graves disease",
            "Cushing syndrome",
            "Addison disease",
            "Pheochromocytoma",
        ],
        1,
    ),
    (
        "Which nerve is compressed in carpal tunnel syndrome?",
        ["Ulnar", "Radial", "Median", "Axillary", "Musculocutaneous"],
        2,
    ),
]


def medqa(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "medqa",
        ["usmle_style_vignettes", "clinical-board-questions"],
        ["Clinical vignettes with five options (A-E).", ""],
        "bigbio/med_qa",
    )
    items = [
        Item(_mc(q, opts, i % 3), LETTERS[a], CHOICE, {"answer": opts[a], "meta_info": "step1"})
        for i, (q, opts, a) in enumerate(_MEDQA)
    ]
    return records(task, items)


_AQUA = [
    (
        "A car travels 60 km in 45 minutes. What is its speed in km/h?",
        ["A)45", "B)60", "C)75", "D)80", "E)90"],
        3,
    ),
    ("If 3x + 5 = 20, what is x?", ["A)3", "B)4", "C)5", "D)6", "E)7"], 2),
    (
        "A shop sells a pen at a 20% profit for Rs. 36. What was its cost price?",
        ["A)28", "B)30", "C)32", "D)34", "E)35"],
        1,
    ),
    ("The average of five numbers is 12. What is their sum?", ["A)48", "B)50", "C)55", "D)60", "E)65"], 3),
    ("How many ways can 4 books be arranged on a shelf?", ["A)12", "B)16", "C)20", "D)24", "E)28"], 3),
    (
        "A tank fills in 6 hours and drains in 9 hours. With both open, how long to fill it?",
        ["A)12", "B)15", "C)18", "D)20", "E)24"],
        2,
    ),
    ("What is 15% of 240?", ["A)30", "B)32", "C)36", "D)40", "E)42"], 2),
    (
        "A train 150 m long passes a pole in 10 s. What is its speed in m/s?",
        ["A)10", "B)12", "C)15", "D)18", "E)20"],
        2,
    ),
    (
        "Simple interest on Rs. 1000 at 5% per year for 3 years is?",
        ["A)100", "B)120", "C)150", "D)175", "E)200"],
        2,
    ),
    (
        "The ratio of boys to girls is 3:2 and there are 30 students. How many girls?",
        ["A)10", "B)12", "C)15", "D)18", "E)20"],
        1,
    ),
    (
        "A number doubled and increased by 7 gives 31. What is the number?",
        ["A)10", "B)11", "C)12", "D)13", "E)14"],
        2,
    ),
]


def aqua_rat(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "aqua_rat",
        ["algebra_word_mc", "aqua-options"],
        ["", "Quantitative problems with five lettered options; reply with the letter."],
        "deepmind/aqua_rat",
    )
    items = [
        Item(f"{q}\nOptions: {' '.join(opts)}", LETTERS[a], CHOICE, {"options": opts, "rationale": "..."})
        for q, opts, a in _AQUA
    ]
    return records(task, items)


_CSQA = [
    (
        "Where would you put a plate after washing it?",
        ["cupboard", "table", "restaurant", "flea market", "dishwasher"],
        0,
    ),
    ("What do people typically do when they are tired?", ["run", "sleep", "dance", "cook", "shout"], 1),
    (
        "Where is a good place to keep a pen so you can find it?",
        ["desk drawer", "ocean", "bus", "forest", "sky"],
        0,
    ),
    ("What might a person feel after winning a race?", ["sadness", "pride", "boredom", "hunger", "fear"], 1),
    ("Where would you find a jellyfish?", ["desert", "ocean", "attic", "library", "garage"], 1),
    (
        "What is a common result of eating too much?",
        ["weight loss", "stomach ache", "flying", "invisibility", "growth"],
        1,
    ),
    ("Where do you go to borrow books?", ["bank", "library", "bakery", "stadium", "pharmacy"], 1),
    (
        "What does a person need to do before driving a car?",
        ["sleep", "get a license", "swim", "paint", "sing"],
        1,
    ),
    (
        "Where would you store milk to keep it cold?",
        ["oven", "refrigerator", "closet", "car trunk", "mailbox"],
        1,
    ),
    ("Why would someone open an umbrella?", ["to stay dry", "to cook", "to read", "to fly", "to hide"], 0),
    ("What do you use to cut paper?", ["spoon", "scissors", "pillow", "brush", "cup"], 1),
]


def commonsenseqa(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "commonsenseqa",
        ["everyday_knowledge_5way", "csqa"],
        ["Everyday-knowledge questions with five choices.", ""],
        "tau/commonsense_qa",
    )
    items = [
        Item(_mc(q, opts, i % 3), LETTERS[a], CHOICE, {"question_concept": opts[a]})
        for i, (q, opts, a) in enumerate(_CSQA)
    ]
    return records(task, items)


# --- class labels ------------------------------------------------------------------------------------


def _labelled(
    task: Task, rows: list[tuple[str, Any]], prompt: str, meta_key: str = "label_text"
) -> list[dict[str, Any]]:
    items = []
    for i, (text, label) in enumerate(rows):
        q = [prompt.format(text=text), f"{text}", f"Text: {text}\nLabel:"][i % 3]
        items.append(Item(q, label, LABEL, {meta_key: label}))
    return records(task, items)


def sst2(rng: random.Random) -> list[dict[str, Any]]:
    rows = [
        ("a gorgeous, witty, seductive movie.", "positive"),
        ("the plot is nothing but boilerplate clichés.", "negative"),
        ("an utterly charming and hilarious film.", "positive"),
        ("it's a bore, and a long one at that.", "negative"),
        ("the performances are uniformly excellent.", "positive"),
        ("a dull, lifeless mess.", "negative"),
        ("one of the year's most satisfying movies.", "positive"),
        ("the dialogue is painfully stilted.", "negative"),
        ("warm, funny and wise.", "positive"),
        ("too long and too loud to enjoy.", "negative"),
        ("a triumph of style and substance.", "positive"),
        ("I walked out halfway through.", "negative"),
    ]
    task = Task(
        "sst2",
        ["movie_review_polarity", "sst-2"],
        ["Is the review positive or negative?", ""],
        "stanfordnlp/sst2",
    )
    return _labelled(task, rows, "Review: {text}\nSentiment (positive or negative):")


def agnews(rng: random.Random) -> list[dict[str, Any]]:
    rows = [
        ("Stocks rallied on Wall Street after the Fed held rates steady.", "Business"),
        ("The striker scored twice as United beat City 3-1.", "Sports"),
        ("NASA's new telescope captured images of distant galaxies.", "Sci/Tech"),
        ("Leaders met in Geneva to discuss a ceasefire agreement.", "World"),
        ("Apple unveiled a faster chip for its laptops.", "Sci/Tech"),
        ("Oil prices fell as inventories rose.", "Business"),
        ("The tennis champion withdrew from the open with an injury.", "Sports"),
        ("Floods displaced thousands in the region, officials said.", "World"),
        ("Researchers released an open-source language model.", "Sci/Tech"),
        ("The retailer reported record holiday sales.", "Business"),
        ("Olympic organizers announced the host city for 2036.", "Sports"),
        ("Parliament passed the new election law on Tuesday.", "World"),
    ]
    task = Task(
        "agnews",
        ["news_topic_4way", "headline-topics"],
        ["", "Assign the news article one of World, Sports, Business, Sci/Tech."],
        "fancyzhx/ag_news",
    )
    return _labelled(task, rows, "Article: {text}\nTopic (World, Sports, Business or Sci/Tech):")


def mnli(rng: random.Random) -> list[dict[str, Any]]:
    pairs = [
        ("A man is playing a guitar on stage.", "A man is performing music.", "entailment"),
        ("A woman is reading in a park.", "The woman is asleep at home.", "contradiction"),
        ("The children are building a sandcastle.", "The children are at the beach.", "neutral"),
        ("The store closes at nine.", "The store is open until nine.", "entailment"),
        ("He bought a red car.", "He bought a blue bicycle.", "contradiction"),
        ("The meeting was postponed.", "The meeting was moved to next week.", "neutral"),
        ("All the cookies were eaten.", "No cookies are left.", "entailment"),
        ("The dog is barking loudly.", "The dog is silent.", "contradiction"),
        ("She is a doctor in Boston.", "She works at a hospital.", "neutral"),
        ("The train arrived late.", "The train was delayed.", "entailment"),
        ("The museum is free on Sundays.", "Tickets cost money every day.", "contradiction"),
    ]
    task = Task(
        "mnli",
        ["premise_hypothesis_relation", "nli-matched"],
        ["Relation between premise and hypothesis.", ""],
        "nyu-mll/multi_nli",
    )
    items = [
        Item(
            [
                f"Premise: {p}\nHypothesis: {h}\nDoes the premise entail the hypothesis? Answer entailment, neutral or contradiction.",
                f"{p} Question: {h} True, False or Neither?",
                f"premise: {p}\nhypothesis: {h}",
            ][i % 3],
            label,
            LABEL,
            {"genre": "fiction"},
        )
        for i, (p, h, label) in enumerate(pairs)
    ]
    return records(task, items)


def boolq(rng: random.Random) -> list[dict[str, Any]]:
    rows = [
        (
            "is the great wall of china visible from space",
            "The Great Wall is not visible to the naked eye from low Earth orbit...",
            False,
        ),
        (
            "do penguins live in the north pole",
            "Penguins live almost exclusively in the Southern Hemisphere...",
            False,
        ),
        (
            "is a tomato a fruit",
            "Botanically, a tomato is a fruit, a berry, consisting of the ovary...",
            True,
        ),
        (
            "can you vote at 16 in austria",
            "Austria lowered the voting age to 16 in 2007 for most elections...",
            True,
        ),
        (
            "is mercury the hottest planet",
            "Venus is the hottest planet because of its thick atmosphere...",
            False,
        ),
        (
            "does the us have a national language",
            "The United States has no official language at the federal level...",
            False,
        ),
        (
            "is the platypus a mammal",
            "The platypus is a semiaquatic, egg-laying mammal endemic to eastern Australia...",
            True,
        ),
        (
            "was the eiffel tower built for a world's fair",
            "The tower was built as the entrance arch to the 1889 World's Fair...",
            True,
        ),
        (
            "is there a bridge from england to france",
            "The Channel Tunnel is a rail tunnel; there is no bridge across the Channel...",
            False,
        ),
        ("do sharks have bones", "Sharks have skeletons made of cartilage rather than bone...", False),
        (
            "is iceland part of the european union",
            "Iceland is not a member of the European Union but is in the EEA...",
            False,
        ),
    ]
    task = Task(
        "boolq",
        ["passage_yes_no", "boolean-questions"],
        ["", "Answer the question about the passage with true or false."],
        "google/boolq",
    )
    items = [
        Item(
            f"{passage}\nQuestion: {q}?",
            ans if i % 2 == 0 else ("yes" if ans else "no"),
            LABEL,
            {"title": q.split()[-1]},
        )
        for i, (q, passage, ans) in enumerate(rows)
    ]
    return records(task, items)


def fever(rng: random.Random) -> list[dict[str, Any]]:
    rows = [
        ("Nikolaj Coster-Waldau worked with the Fox Broadcasting Company.", "SUPPORTS"),
        ("Roman Atwood is a content creator.", "SUPPORTS"),
        ("The Eiffel Tower is located in Rome.", "REFUTES"),
        ("Adrienne Bailon is an accountant.", "REFUTES"),
        ("Tilda Swinton is a vegan.", "NOT ENOUGH INFO"),
        ("Mount Everest is the highest mountain above sea level.", "SUPPORTS"),
        ("The Amazon River flows through Egypt.", "REFUTES"),
        ("Barack Obama was born in Hawaii.", "SUPPORTS"),
        ("Stranger Things is set in Bloomington, Indiana.", "REFUTES"),
        ("The composer's favorite color was green.", "NOT ENOUGH INFO"),
        ("Python was first released in 1991.", "SUPPORTS"),
    ]
    task = Task(
        "fever",
        ["claim_verification", "fact-check-claims"],
        ["Decide whether the evidence supports or refutes the claim.", ""],
        "fever/fever",
    )
    return _labelled(task, rows, "Claim: {text}\nVerdict (SUPPORTS, REFUTES or NOT ENOUGH INFO):", "label")


def banking77(rng: random.Random) -> list[dict[str, Any]]:
    rows = [
        ("I am still waiting on my card?", "card_arrival"),
        ("What can I do if my card still hasn't arrived after 2 weeks?", "card_arrival"),
        ("My transfer hasn't reached the recipient yet", "transfer_not_received_by_recipient"),
        ("How do I top up using my credit card?", "top_up_by_card_charge"),
        ("I think someone stole my card", "lost_or_stolen_card"),
        ("Why was I charged an extra fee for withdrawing cash?", "cash_withdrawal_charge"),
        ("Can I change my PIN at an ATM?", "change_pin"),
        ("The exchange rate on my statement looks wrong", "wrong_exchange_rate_for_cash_withdrawal"),
        ("How do I verify my identity?", "verify_my_identity"),
        ("Please close my account", "terminate_account"),
        ("My card payment was declined", "declined_card_payment"),
        ("Is there a limit on how much I can top up?", "top_up_limits"),
    ]
    task = Task(
        "banking77",
        ["customer_intent_routing", "support-intents"],
        ["", "Map the customer message to one of the 77 intent names."],
        "PolyAI/banking77",
    )
    return _labelled(task, rows, "Customer message: {text}\nIntent:", "label_name")


def emotion(rng: random.Random) -> list[dict[str, Any]]:
    rows = [
        ("i feel so happy that my sister got the job", "joy"),
        ("i am so angry at the way they treated us", "anger"),
        ("i feel really lonely tonight", "sadness"),
        ("i was terrified when the lights went out", "fear"),
        ("i adore the way he smiles at me", "love"),
        ("i could not believe we actually won", "surprise"),
        ("i feel gloomy and hopeless today", "sadness"),
        ("i am thrilled about the trip", "joy"),
        ("i feel irritated by all the noise", "anger"),
        ("i am scared of what the test will show", "fear"),
        ("i feel so loved by my friends", "love"),
    ]
    task = Task(
        "emotion",
        ["tweet_emotion_6way", "feelings-in-posts"],
        ["Which of six emotions does the post express?", ""],
        "dair-ai/emotion",
    )
    return _labelled(
        task, rows, "Post: {text}\nEmotion (sadness, joy, love, anger, fear, surprise):", "label_name"
    )


# --- spans and factoids ------------------------------------------------------------------------------

_SQUAD = [
    (
        "Super Bowl 50 was an American football game to determine the champion of the National Football League (NFL) for the 2015 season. The American Football Conference (AFC) champion Denver Broncos defeated the National Football Conference (NFC) champion Carolina Panthers 24–10.",
        "Which NFL team won Super Bowl 50?",
        "Denver Broncos",
    ),
    (
        "The Normans were the people who in the 10th and 11th centuries gave their name to Normandy, a region in France.",
        "In what country is Normandy located?",
        "France",
    ),
    (
        "Oxygen is a chemical element with symbol O and atomic number 8. It is a member of the chalcogen group on the periodic table.",
        "What is the atomic number of oxygen?",
        "8",
    ),
    (
        "The Amazon rainforest covers much of the Amazon basin of South America, an area of 7,000,000 square kilometres.",
        "How large is the Amazon basin?",
        "7,000,000 square kilometres",
    ),
    (
        "Tesla was born on 10 July 1856 in Smiljan, in the Austrian Empire.",
        "Where was Tesla born?",
        "Smiljan",
    ),
    (
        "The university's main campus is in Hyde Park, on Chicago's South Side.",
        "In which neighborhood is the main campus?",
        "Hyde Park",
    ),
    (
        "Victoria was the sovereign of the United Kingdom from 20 June 1837 until her death in 1901.",
        "When did Victoria's reign begin?",
        "20 June 1837",
    ),
    (
        "The Rhine flows from the Swiss Alps to the North Sea through Germany and the Netherlands.",
        "Where does the Rhine end?",
        "the North Sea",
    ),
    (
        "Photosynthesis converts light energy into chemical energy stored in glucose.",
        "What is light energy converted into?",
        "chemical energy",
    ),
    (
        "The Apollo 11 mission landed the first humans on the Moon in July 1969.",
        "Which mission first landed humans on the Moon?",
        "Apollo 11",
    ),
    (
        "Beyoncé rose to fame in the late 1990s as lead singer of the group Destiny's Child.",
        "Which group was Beyoncé the lead singer of?",
        "Destiny's Child",
    ),
]


def squad(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "squad",
        ["reading_comprehension_spans", "squad-v1.1"],
        ["Answer with a span copied from the context.", ""],
        "rajpurkar/squad",
    )
    items = []
    for i, (ctx, q, ans) in enumerate(_SQUAD):
        ref = {"text": [ans], "answer_start": [ctx.find(ans)]}
        acc = [*SPAN, "math_verify"] if ans.replace(",", "").isdigit() else SPAN
        items.append(
            Item(
                f"Context: {ctx}\nQuestion: {q}\nAnswer:",
                ref,
                acc,
                {"title": ctx.split()[0], "id": f"5733be{i:04d}"},
            )
        )
    return records(task, items)


_TRIVIA = [
    (
        "Which Lloyd Webber musical premiered in the US on 10th December 1993?",
        "Sunset Boulevard",
        ["Sunset Blvd", "Sunset Boulevard (musical)"],
    ),
    ("Who was the man behind The Chipmunks?", "David Seville", ["Ross Bagdasarian"]),
    ("What is the capital of Australia?", "Canberra", ["Canberra, Australia"]),
    ("Which element has the chemical symbol Fe?", "Iron", ["Fe", "iron"]),
    ("In which city is the Prado Museum?", "Madrid", ["Madrid, Spain"]),
    ("Who painted 'The Night Watch'?", "Rembrandt", ["Rembrandt van Rijn"]),
    ("What is the largest ocean on Earth?", "Pacific Ocean", ["Pacific", "The Pacific"]),
    ("Which planet is known as the Red Planet?", "Mars", ["Planet Mars"]),
    (
        "Who wrote 'One Hundred Years of Solitude'?",
        "Gabriel García Márquez",
        ["Gabriel Garcia Marquez", "Gabo"],
    ),
    ("What is the currency of Japan?", "Yen", ["Japanese yen", "JPY"]),
    ("Which country gifted the Statue of Liberty to the USA?", "France", ["French Republic"]),
]


def triviaqa(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "triviaqa",
        ["pub_quiz_questions", "trivia-rc-nocontext"],
        ["", "Closed-book quiz questions; any listed alias counts."],
        "mandarjoshi/trivia_qa:rc.nocontext",
    )
    items = [
        Item(
            q if i % 2 else f"Question: {q}\nAnswer:",
            {"value": v, "aliases": [v, *al], "normalized_aliases": [a.lower() for a in [v, *al]]},
            SPAN,
            {"question_source": "http://www.quizballs.com/"},
        )
        for i, (q, v, al) in enumerate(_TRIVIA)
    ]
    return records(task, items)


_NQ = [
    ("when did canada become a country", ["1867", "July 1, 1867"]),
    ("who played forrest gump in the movie", ["Tom Hanks"]),
    ("what is the tallest building in the world", ["Burj Khalifa"]),
    ("how many players are on a soccer team on the field", ["11", "eleven"]),
    ("who wrote the declaration of independence", ["Thomas Jefferson"]),
    ("where is the great barrier reef located", ["Coral Sea", "off the coast of Queensland, Australia"]),
    ("what year did the titanic sink", ["1912"]),
    ("who sings don't stop believin", ["Journey"]),
    ("what is the longest river in africa", ["the Nile", "Nile"]),
    ("how many bones are in the adult human body", ["206"]),
    ("who discovered penicillin", ["Alexander Fleming"]),
    ("what language is spoken in brazil", ["Portuguese"]),
]


def nq_open(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "nq_open",
        ["google_search_questions", "open-domain-factoids"],
        ["Short factual answers to search-engine questions.", ""],
        "google-research-datasets/nq_open",
    )
    items = []
    for q, answers in _NQ:
        acc = [*SPAN, "math_verify"] if answers[0].isdigit() else SPAN
        items.append(Item(q + "?", answers, acc))
    return records(task, items)


_HOTPOT = [
    ("Were Scott Derrickson and Ed Wood of the same nationality?", "yes"),
    (
        "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?",
        "Chief of Protocol",
    ),
    ("Which magazine was started first, Arthur's Magazine or First for Women?", "Arthur's Magazine"),
    ("Are the Laleli Mosque and Esma Sultan Mansion located in the same neighborhood?", "no"),
    (
        "The director of the romantic comedy 'Big Stone Gap' is based in what New York city?",
        "Greenwich Village, New York City",
    ),
    ("Who was born first, Pablo Picasso or Henri Matisse?", "Henri Matisse"),
    ("Is the Danube longer than the Rhine?", "yes"),
    ("Which band had more members, The Beatles or Queen?", "The Beatles"),
    ("What is the capital of the country where the Oresund Bridge ends?", "Stockholm"),
    ("Did Albert Einstein and Niels Bohr win the Nobel Prize in the same field?", "yes"),
    ("In which city was the author of 'Dracula' born?", "Dublin"),
]


def hotpotqa(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "hotpotqa",
        ["multi_hop_wikipedia", "bridge-and-comparison-questions"],
        ["", "Questions needing two Wikipedia paragraphs."],
        "hotpotqa/hotpot_qa:distractor",
    )
    items = [
        Item(
            f"Question: {q}\nAnswer briefly.",
            a,
            SPAN,
            {"type": "comparison" if a in ("yes", "no") else "bridge", "level": "medium"},
        )
        for q, a in _HOTPOT
    ]
    return records(task, items)


_WTQ = [
    (
        "| Year | Host | Winner |\n| 2010 | South Africa | Spain |\n| 2014 | Brazil | Germany |\n| 2018 | Russia | France |",
        "which country hosted in 2014?",
        ["Brazil"],
    ),
    ("| Name | Goals |\n| Ana | 12 |\n| Ben | 9 |\n| Chen | 15 |", "who scored the most goals?", ["Chen"]),
    (
        "| City | Population |\n| Oslo | 709,000 |\n| Bergen | 285,000 |",
        "how many people live in bergen?",
        ["285,000"],
    ),
    (
        "| Album | Year |\n| Alpha | 1999 |\n| Beta | 2003 |\n| Gamma | 2003 |",
        "how many albums were released in 2003?",
        ["2"],
    ),
    (
        "| Team | Wins | Losses |\n| Hawks | 10 | 2 |\n| Owls | 7 | 5 |",
        "which team lost more games?",
        ["Owls"],
    ),
    (
        "| Station | Line |\n| Central | Red |\n| Harbor | Blue |\n| Park | Red |",
        "which stations are on the red line?",
        ["Central", "Park"],
    ),
    ("| Film | Director |\n| Up | Docter |\n| Cars | Lasseter |", "who directed cars?", ["Lasseter"]),
    ("| Athlete | Time |\n| Kim | 10.2 |\n| Lee | 9.9 |", "who was fastest?", ["Lee"]),
    (
        "| Year | Champion |\n| 2001 | Reds |\n| 2002 | Blues |\n| 2003 | Reds |",
        "how many titles did the reds win?",
        ["2"],
    ),
    (
        "| Country | Capital |\n| Peru | Lima |\n| Chile | Santiago |",
        "what is the capital of chile?",
        ["Santiago"],
    ),
    ("| Model | Price |\n| X1 | $300 |\n| X2 | $450 |", "what is the price of the x2?", ["$450"]),
]


def wikitq(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "wikitablequestions",
        ["table_lookup_questions", "wtq"],
        ["Answer the question from the table.", ""],
        "stanfordnlp/wikitablequestions",
    )
    items = []
    for table, q, ans in _WTQ:
        numeric = ans[0].replace(",", "").replace("$", "").isdigit()
        items.append(
            Item(
                f"{table}\nQuestion: {q}",
                ans,
                [*SPAN, "exact_match", "math_verify"] if numeric else [*SPAN, "exact_match"],
            )
        )
    return records(task, items)


_XQUAD = [
    (
        "es",
        "El Amazonas es el río más caudaloso del mundo y atraviesa Brasil, Perú y Colombia.",
        "¿Qué río es el más caudaloso del mundo?",
        "El Amazonas",
    ),
    (
        "de",
        "Die Berliner Mauer fiel am 9. November 1989.",
        "Wann fiel die Berliner Mauer?",
        "am 9. November 1989",
    ),
    (
        "es",
        "Miguel de Cervantes escribió Don Quijote de la Mancha.",
        "¿Quién escribió Don Quijote?",
        "Miguel de Cervantes",
    ),
    (
        "de",
        "Der Rhein entspringt in den Schweizer Alpen.",
        "Wo entspringt der Rhein?",
        "in den Schweizer Alpen",
    ),
    (
        "fr",
        "La tour Eiffel a été construite pour l'Exposition universelle de 1889.",
        "Pour quel événement la tour Eiffel a-t-elle été construite ?",
        "l'Exposition universelle de 1889",
    ),
    (
        "it",
        "Leonardo da Vinci dipinse la Gioconda all'inizio del Cinquecento.",
        "Chi dipinse la Gioconda?",
        "Leonardo da Vinci",
    ),
    ("es", "La capital de Argentina es Buenos Aires.", "¿Cuál es la capital de Argentina?", "Buenos Aires"),
    ("de", "Johann Sebastian Bach wurde in Eisenach geboren.", "Wo wurde Bach geboren?", "in Eisenach"),
    (
        "fr",
        "Marie Curie a reçu deux prix Nobel, en physique et en chimie.",
        "Combien de prix Nobel Marie Curie a-t-elle reçus ?",
        "deux",
    ),
    ("pt", "O Brasil declarou independência em 1822.", "Em que ano o Brasil declarou independência?", "1822"),
    (
        "ru",
        "Юрий Гагарин стал первым человеком в космосе в 1961 году.",
        "Кто был первым человеком в космосе?",
        "Юрий Гагарин",
    ),
]


def xquad(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "xquad",
        ["multilingual_reading_comp", "cross-lingual-spans"],
        ["", "Extractive answers in the language of the passage."],
        "google/xquad",
    )
    items = []
    for lang, ctx, q, ans in _XQUAD:
        acc = [*SPAN, "math_verify"] if ans.isdigit() else SPAN
        items.append(
            Item(f"{ctx}\n{q}", {"text": [ans], "answer_start": [max(0, ctx.find(ans))]}, acc, {"lang": lang})
        )
    return records(task, items)


_FIELDS = [
    (
        "INVOICE #4471\nDate: 21/03/2019\nBill to: Harbor Foods Ltd\nTotal due: $1,250.00",
        "What is the invoice total?",
        "$1,250.00",
        True,
    ),
    (
        "RECEIPT\nSTARBUCKS STORE 1923\n12 MAIN ST\nTOTAL 8.45\n03/05/2020 09:14",
        "Extract the store company name.",
        "STARBUCKS",
        False,
    ),
    (
        'This Agreement is made on January 5, 2021 between Acme Corp. ("Supplier") and Beta LLC ("Buyer").',
        "Who is the Supplier?",
        "Acme Corp.",
        False,
    ),
    (
        "Patient: J. Doe  DOB: 04/11/1975  MRN: 558201",
        "What is the patient's medical record number?",
        "558201",
        True,
    ),
    (
        "Flight LH 401 departs FRA 10:25, arrives JFK 13:05 local time.",
        "What is the arrival airport code?",
        "JFK",
        False,
    ),
    (
        "Order confirmation: 3 x USB-C cable, subtotal €23.97, shipping €4.99.",
        "What is the shipping cost?",
        "€4.99",
        True,
    ),
    (
        "Lease term: twenty-four (24) months commencing on June 1, 2022.",
        "When does the lease commence?",
        "June 1, 2022",
        False,
    ),
    ("Payslip — Employee ID: E-2291, Net pay: 2,840.15 EUR", "What is the employee ID?", "E-2291", False),
    (
        "Shipment tracking number 1Z999AA10123456784 was delivered to the front desk.",
        "What is the tracking number?",
        "1Z999AA10123456784",
        False,
    ),
    (
        "Meeting minutes, 14 Feb 2023. Chair: Dr. Amara Okafor. Attendees: 12.",
        "Who chaired the meeting?",
        "Dr. Amara Okafor",
        False,
    ),
    (
        "Total energy consumption in Q3: 4,812 kWh (up 6% year on year).",
        "How much energy was consumed in Q3?",
        "4,812 kWh",
        True,
    ),
]


def document_fields(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "document_fields",
        ["receipt_and_contract_fields", "key-information-from-documents"],
        ["Pull the requested field out of the document text, verbatim.", ""],
        "written-for-rlar (SROIE / CUAD style)",
    )
    items = []
    for doc, q, ans, numeric in _FIELDS:
        acc = [
            "normalized_match",
            "exact_match",
            "contains_match",
            *(
                ["math_verify"]
                if numeric and ans.replace(",", "").replace("$", "").replace(".", "").isdigit()
                else []
            ),
        ]
        items.append(Item(f"{doc}\n\n{q}", ans, acc))
    return records(task, items)


# --- string puzzles ----------------------------------------------------------------------------------


def word_sorting(rng: random.Random) -> list[dict[str, Any]]:
    pools = [
        ["oven", "costume", "counterpart"],
        ["apple", "zebra", "mango", "kiwi"],
        ["thrush", "belgium", "snap", "aviv"],
        ["syndrome", "therefrom", "arrival"],
        ["river", "delta", "canyon", "basin", "aquifer"],
        ["quartz", "onyx", "jade"],
        ["piano", "violin", "flute", "cello"],
        ["maple", "birch", "oak", "cedar", "elm"],
        ["tuesday", "friday", "monday"],
        ["lynx", "ocelot", "jaguar", "cougar"],
        ["brine", "amber", "cobalt"],
    ]
    task = Task(
        "word_sorting",
        ["alphabetize_words", "bbh-word-sorting"],
        ["", "Sort the words alphabetically and output them separated by spaces."],
        "lukaemon/bbh:word_sorting",
    )
    items = [
        Item(f"Sort the following words alphabetically: List: {' '.join(p)}", " ".join(sorted(p)), LABEL)
        for p in pools
    ]
    return records(task, items)


def dyck(rng: random.Random) -> list[dict[str, Any]]:
    seqs = [
        ("[ { [", "] } ]"),
        ("( < > (", ") )"),
        ("{ [ ( )", "] }"),
        ("< { } [", "] >"),
        ("( [ { } ] ( (", ") ) )"),
        ("{ < [ ] >", "}"),
        ("[ ( ( )", ") ]"),
        ("< < > ( [", "] ) >"),
        ("( { }", ")"),
        ("[ < { ( ) }", "> ]"),
        ("{ ( [ [ ] ]", ") }"),
    ]
    task = Task(
        "dyck_languages",
        ["close_the_brackets", "bbh-dyck"],
        ["Complete the rest of the sequence so every parenthesis closes.", ""],
        "lukaemon/bbh:dyck_languages",
    )
    items = [
        Item(
            f"Complete the rest of the sequence, making sure that the parentheses are closed properly. Input: {a}",
            b,
            ["exact_match"],
        )
        for a, b in seqs
    ]
    return records(task, items)


def date_normalization(rng: random.Random) -> list[dict[str, Any]]:
    cases = [
        ("March 4th, 2021", "2021-03-04"),
        ("4/7/1999 (US)", "1999-04-07"),
        ("the 1st of December 2010", "2010-12-01"),
        ("Feb 29 2024", "2024-02-29"),
        ("31.12.1995", "1995-12-31"),
        ("July 20, 1969", "1969-07-20"),
        ("2003 Nov 9", "2003-11-09"),
        ("9 Jan '88", "1988-01-09"),
        ("Sunday, 5 May 2019", "2019-05-05"),
        ("10/11/2012 (day first)", "2012-11-10"),
        ("June 6 1944", "1944-06-06"),
    ]
    task = Task(
        "date_normalization",
        ["iso_dates", "normalize-dates"],
        ["Rewrite the date as YYYY-MM-DD.", ""],
        "written-for-rlar",
    )
    items = [
        Item(
            [f"Convert '{d}' to ISO 8601 (YYYY-MM-DD).", f"Date: {d}\nISO:", f"What is {d} in YYYY-MM-DD?"][
                i % 3
            ],
            iso,
            LABEL,
        )
        for i, (d, iso) in enumerate(cases)
    ]
    return records(task, items)


def letter_counting(rng: random.Random) -> list[dict[str, Any]]:
    words = [
        ("strawberry", "r"),
        ("mississippi", "s"),
        ("banana", "a"),
        ("bookkeeper", "e"),
        ("committee", "t"),
        ("assessment", "s"),
        ("parallel", "l"),
        ("occurrence", "c"),
        ("necessary", "s"),
        ("possession", "s"),
        ("millennium", "n"),
    ]
    task = Task(
        "letter_counting",
        ["count_characters", "char-frequency-questions"],
        ["", "Count occurrences of a letter in a word."],
        "written-for-rlar",
    )
    items = [
        Item(
            f"How many times does the letter '{c}' appear in the word '{w}'?",
            str(w.count(c)),
            [*MATH, "exact_match", "normalized_match"],
        )
        for w, c in words
    ]
    return records(task, items)


ALL = [
    mmlu,
    arc,
    hellaswag,
    medqa,
    aqua_rat,
    commonsenseqa,
    sst2,
    agnews,
    mnli,
    boolq,
    fever,
    banking77,
    emotion,
    squad,
    triviaqa,
    nq_open,
    hotpotqa,
    wikitq,
    xquad,
    document_fields,
    word_sorting,
    dyck,
    date_normalization,
    letter_counting,
]
