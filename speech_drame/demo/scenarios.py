"""Texts of the demo corpus, all written for it: archetype prompts and realism characters.

Archetype prompts follow the paper's pattern ("You are ... . <scene>. You say:", Appendix D.2)
in its seven role categories. Each prompt has on-role replies, one off-role reply that a Content
Pass check rejects (fourth-wall break, narration or spoken stage direction, Appendix E.4) and the
arousal a fitting delivery would have (-1 subdued .. +1 urgent/excited).

Realism characters carry a profile, ``char_style`` traits, ``char_age``, a local scene with its
target arousal, transcripts, and the negatives the paper builds (Appendix F.5): three negative
scenes (mild, moderate, severe mismatch) and three profile swaps (another character's profile
and scene, at mild, moderate and severe distance). Characters with ``real_group`` are given to
the real recordings of :mod:`speech_drame.demo.real_speech`; their transcripts come from the
clips. The Mandarin texts live in :mod:`speech_drame.demo.scenarios_zh`.
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES: tuple[str, ...] = (
    "DailyOccupation",
    "FictionalOccupation",
    "SocialIdentity",
    "NamedCharacter",
    "PersonalityTrait",
    "RelativeRole",
    "BasicEvent",
)
OFF_ROLE_KINDS: tuple[str, ...] = ("fourth_wall", "narration", "stage_direction")
MISMATCH_LABELS: tuple[str, ...] = ("none", "mild", "moderate", "severe")  # level 0..3


@dataclass(frozen=True)
class ArchetypeScenario:
    key: str
    category: str
    question: str
    arousal: float
    on_role: tuple[str, ...] = ()
    off_role: str = ""
    off_role_kind: str = ""
    real_group: str = ""  # prompts written for real clips: the clips are the on-role replies
    language: str = "en"  # of the question and the replies


@dataclass(frozen=True)
class Scene:
    text: str
    arousal: float


@dataclass(frozen=True)
class Character:
    key: str
    gender: str
    age: str
    style: str
    profile: str
    scene: Scene
    negative_scenes: tuple[Scene, Scene, Scene]  # mild, moderate, severe
    profile_swaps: tuple[str, str, str]  # character keys: mild, moderate, severe
    transcripts: tuple[str, ...] = ()
    real_group: str = ""
    recorded_arousal: float = 0.0  # real groups: arousal of the recorded delivery
    language: str = "en"  # of the context texts and the transcripts


def _a(key, category, question, arousal, on_role, off_role, kind) -> ArchetypeScenario:
    return ArchetypeScenario(key, category, question, arousal, tuple(on_role), off_role, kind)


ARCHETYPE_SCENARIOS: tuple[ArchetypeScenario, ...] = (
    # --- DailyOccupation
    _a(
        "er_nurse",
        "DailyOccupation",
        "You are an emergency-room nurse. A frightened man arrives holding a bleeding hand and "
        "keeps apologising for the fuss. You say:",
        0.0,
        [
            "Hey, no need to apologise, that's what we're here for. Keep the towel pressed tight and "
            "come sit with me.",
            "Let me have a look. It's deep, but you'll be fine. We'll clean it up and stitch it in no "
            "time.",
        ],
        "As the nurse in this scene, I would now calmly reassure the patient and explain the "
        "treatment.",
        "fourth_wall",
    ),
    _a(
        "lifeguard",
        "DailyOccupation",
        "You are a lifeguard. A swimmer has drifted past the flags and is waving one arm in a "
        "strong current. You say:",
        1.0,
        [
            "Hey! Stay calm and float on your back, I'm coming out to you right now!",
            "Don't fight the current! Swim sideways, along the beach, I've got the board!",
        ],
        "Blows the whistle twice and sprints toward the water, pointing at the swimmer.",
        "stage_direction",
    ),
    _a(
        "librarian",
        "DailyOccupation",
        "You are a school librarian. Two students are giggling loudly behind the shelves during "
        "exam week. You say:",
        -1.0,
        [
            "Shh, come on, you two. People are revising in here. Take the jokes outside, please.",
            "I know it's funny, but keep it down. There's a whole room of nervous students next door.",
        ],
        "This is a role-play where I play a librarian, so my character tells them to be quiet.",
        "fourth_wall",
    ),
    _a(
        "taxi_driver",
        "DailyOccupation",
        "You are a night-shift taxi driver. Your passenger is late for the airport and keeps "
        "asking how long it will take. You say:",
        0.0,
        [
            "Twenty minutes if the lights are kind to us. Sit back, I know a shortcut past the "
            "stadium.",
            "Relax, I do this run every night. You'll make your flight, I promise.",
        ],
        "The driver glances in the mirror and says the airport is close, and the passenger nods.",
        "narration",
    ),
    # --- FictionalOccupation
    _a(
        "dragon_keeper",
        "FictionalOccupation",
        "You are the keeper of the royal dragon stables. A careless squire has left the gate open "
        "and a young dragon is loose in the courtyard. You say:",
        1.0,
        [
            "Nobody move! Keep your torches low and let her come to me, she's only frightened.",
            "Squire, shut that gate behind you, now! And fetch the smoked fish from the cellar!",
        ],
        "Raises both hands slowly and steps toward the dragon holding a bucket of fish.",
        "stage_direction",
    ),
    _a(
        "starship_navigator",
        "FictionalOccupation",
        "You are the navigator of a cargo starship. The engines have failed and the ship is "
        "drifting toward an asteroid field. You say:",
        1.0,
        [
            "Captain, we have six minutes before the first rocks. Route all power to the thrusters, "
            "now!",
            "Hold on, I'm plotting a path through the gap. Everyone strap in, this will be rough.",
        ],
        "Okay, so in this science fiction scenario I am the navigator, and I would warn the "
        "captain.",
        "fourth_wall",
    ),
    _a(
        "old_wizard",
        "FictionalOccupation",
        "You are an old wizard teaching an apprentice. The apprentice has just set the tower's "
        "curtains on fire with a failed spell. You say:",
        0.0,
        [
            "Ah. Well. That is precisely why we practise next to the water barrel. Put it out, then "
            "try again.",
            "Breathe, child. Every wizard burns a curtain or two. Mine were velvet.",
        ],
        "Sighs deeply, waves the staff, and the flames vanish in a puff of blue smoke.",
        "stage_direction",
    ),
    _a(
        "haunted_innkeeper",
        "FictionalOccupation",
        "You are the innkeeper of a haunted mountain village. A weary traveller knocks at "
        "midnight asking for a room. You say:",
        -1.0,
        [
            "Come in quickly and close the door. Don't mind the cold draught, it follows me about.",
            "One room left, at the end of the hall. Whatever you hear tonight, don't open the door.",
        ],
        "The innkeeper welcomes the traveller and hands over the last key, and that is the end of "
        "the scene.",
        "narration",
    ),
    # --- SocialIdentity
    _a(
        "overprotective_parent",
        "SocialIdentity",
        "You are an overprotective parent. Your teenager wants to go camping with friends for the "
        "first time, with no adults. You say:",
        1.0,
        [
            "Camping? Alone? Who's driving, where are you sleeping, and is there even phone signal "
            "out there?",
            "Absolutely not, not without checking in every two hours. I mean it, every two hours!",
        ],
        "I'm playing an overprotective parent here, so I'll pretend to be really worried.",
        "fourth_wall",
    ),
    _a(
        "laid_back_friend",
        "SocialIdentity",
        "You are a laid-back, go-with-the-flow friend. Your roommate is panicking because party "
        "guests arrive in ten minutes and nothing is ready. You say:",
        -1.0,
        [
            "Relax. Chips in a bowl, music on, done. Nobody cares about the napkins.",
            "It's fine, honestly. People come for the company, not the decorations. Grab a drink.",
        ],
        "Shrugs, leans back on the sofa and slowly opens a bag of chips.",
        "stage_direction",
    ),
    _a(
        "proud_grandparent",
        "SocialIdentity",
        "You are a proud grandparent. Your granddaughter phones to say she passed her driving "
        "test on the first try. You say:",
        1.0,
        [
            "First try? Oh, that's my girl! I knew it, I told everyone you'd do it!",
            "Wonderful news, sweetheart! Now you can drive your old grandad to the seaside.",
        ],
        "In my role as the grandparent I am supposed to sound proud, so, congratulations.",
        "fourth_wall",
    ),
    _a(
        "new_neighbour",
        "SocialIdentity",
        "You are a newcomer who has just moved into the street. The family next door brings you a "
        "homemade pie as a welcome gift. You say:",
        0.0,
        [
            "Oh, that's so kind of you! It smells amazing. Please, come in for a minute.",
            "Thank you, really. We don't know anyone here yet, so this means a lot.",
        ],
        "Then the new neighbour thanks them, and they chat about the street for a while.",
        "narration",
    ),
    # --- NamedCharacter (public-domain characters)
    _a(
        "sherlock_holmes",
        "NamedCharacter",
        "You are Sherlock Holmes. A visitor insists he has just walked in from the countryside, "
        "but his shoes are spotless. You say:",
        0.0,
        [
            "Spotless shoes after a country walk? You came by cab from the station, and the rest of "
            "your story is invented.",
            "Do sit down. Your tale is charming, but your boots have told me a different one.",
        ],
        "I am Sherlock Holmes, the famous detective from the books, and now I make a deduction.",
        "fourth_wall",
    ),
    _a(
        "scrooge",
        "NamedCharacter",
        "You are Ebenezer Scrooge, before his change of heart. Your clerk asks to leave early on "
        "Christmas Eve. You say:",
        -1.0,
        [
            "Early? And I suppose you'll want paying for the hours you don't work, as well.",
            "Christmas is a poor excuse for picking a man's pocket. Be here all the earlier next "
            "morning.",
        ],
        "Scowls over the ledger and taps the quill impatiently against the desk.",
        "stage_direction",
    ),
    _a(
        "captain_ahab",
        "NamedCharacter",
        "You are Captain Ahab. The lookout finally spots the white whale on the horizon. You say:",
        1.0,
        [
            "There she blows! Lower the boats, every man of you, and pull as you have never pulled!",
            "At last! I have chased that beast across every sea. Today it ends!",
        ],
        "Captain Ahab looks out to sea and then shouts to the crew about the whale.",
        "narration",
    ),
    _a(
        "alice",
        "NamedCharacter",
        "You are Alice, just arrived in Wonderland. A white rabbit in a waistcoat hurries past, "
        "checking a pocket watch. You say:",
        0.0,
        [
            "Excuse me, Mister Rabbit! Wait! Where are you going in such a hurry?",
            "A rabbit with a watch? How very curious. I simply must follow him.",
        ],
        "So I'm playing Alice from the book, and this is the part where I see the rabbit.",
        "fourth_wall",
    ),
    # --- PersonalityTrait
    _a(
        "hot_blooded",
        "PersonalityTrait",
        "Your personality is defined as hot-blooded. Your five-a-side team is one goal down with "
        "a minute left on the clock. You say:",
        1.0,
        [
            "Come on, one more push! Give me the ball, I'm not losing this one!",
            "Everybody forward! We score now or we go home with nothing!",
        ],
        "Clenches both fists, punches the air and charges up the pitch.",
        "stage_direction",
    ),
    _a(
        "complainer",
        "PersonalityTrait",
        "Your personality is defined as constantly complaining. Your hotel room looks onto a car "
        "park and the kettle is broken. You say:",
        0.0,
        [
            "Of course the kettle's broken. And look at this view. Lovely. A car park. Five stars, "
            "apparently.",
            "I paid for a sea view and got tarmac. And don't get me started on the pillows.",
        ],
        "My character is a complainer, so at this point I would complain about the hotel.",
        "fourth_wall",
    ),
    _a(
        "extremely_shy",
        "PersonalityTrait",
        "Your personality is defined as extremely shy. A colleague asks you to say a few words at "
        "their leaving party. You say:",
        -1.0,
        [
            "Oh, um, me? Okay. Just... thank you for everything. We'll miss you. That's all.",
            "I'm not really good at speeches, but, um, you were always kind to me.",
        ],
        "The shy person blushes and then says a few quiet words to the colleague.",
        "narration",
    ),
    _a(
        "sharp_tongued",
        "PersonalityTrait",
        "Your personality is defined as sharp-tongued. Your friend proudly shows you a painting "
        "from their weekend art class. You say:",
        0.0,
        [
            "Bold choice, making the horse purple. Was the class on abstract art or on eyesight?",
            "Well, it's certainly large. I'll give it that. Very, very large.",
        ],
        "Raises one eyebrow, tilts the head and squints at the canvas.",
        "stage_direction",
    ),
    # --- RelativeRole
    _a(
        "parent_late_child",
        "RelativeRole",
        "You are a parent. Your child comes home long after midnight without having answered any "
        "of your calls. You say:",
        1.0,
        [
            "Do you know what time it is? I called you eleven times! I was about to phone the police!",
            "Where were you? You can't just switch your phone off and disappear like that!",
        ],
        "I'm acting as the parent in this situation, and I would be very angry now.",
        "fourth_wall",
    ),
    _a(
        "stranger_open_bag",
        "RelativeRole",
        "You are a stranger on a train platform. You notice another passenger's backpack is open "
        "and a wallet is about to fall out. You say:",
        0.0,
        [
            "Sorry, excuse me, your bag's open. I think your wallet's about to drop.",
            "Hey, just so you know, your backpack is unzipped. Wouldn't want you to lose anything.",
        ],
        "A stranger on the platform tells the passenger about the open bag and walks away.",
        "narration",
    ),
    _a(
        "older_sibling_balloon",
        "RelativeRole",
        "You are an older sibling. Your little brother is crying because his balloon floated away "
        "at the fair. You say:",
        -1.0,
        [
            "Hey, hey, it's okay. Look, it's flying all the way up to the clouds. Want some of my "
            "candy floss?",
            "Come here, little man. We'll get you a new one, an even bigger one, I promise.",
        ],
        "Kneels down, wipes away his tears and gives him a gentle hug.",
        "stage_direction",
    ),
    _a(
        "student_top_mark",
        "RelativeRole",
        "You are a student. Your teacher hands back your exam and you see you got the top mark in "
        "the class. You say:",
        1.0,
        [
            "Wait, really? Top of the class? I actually studied for once and it worked!",
            "No way! Can I take a photo of this? My mum is never going to believe it.",
        ],
        "As the student character, I would be really happy about this grade.",
        "fourth_wall",
    ),
    # --- BasicEvent
    _a(
        "promotion",
        "BasicEvent",
        "Your boss calls you in and says you are being promoted, with a raise, from next month. "
        "You walk back to your desk, unable to stop grinning. You say:",
        1.0,
        [
            "Yes! Finally! All those late nights actually paid off!",
            "Okay, act normal, act normal... no, I can't, I'm getting a raise!",
        ],
        "The employee returns to the desk and happily tells everyone the good news.",
        "narration",
    ),
    _a(
        "overheard_gossip",
        "BasicEvent",
        "You overhear two coworkers in the kitchen spreading a rumour about you. Your face turns "
        "red. You say:",
        0.0,
        [
            "I can hear you, you know. If you've got something to say, say it to my face.",
            "Wow. Lovely. Do carry on, I'd love to hear the rest of this story about me.",
        ],
        "Freezes in the doorway, cheeks burning, and slowly puts the mug down.",
        "stage_direction",
    ),
    _a(
        "missed_last_bus",
        "BasicEvent",
        "You run through the rain to the stop just as the last bus of the night pulls away. You "
        "say:",
        -1.0,
        [
            "Oh, brilliant. Just brilliant. Soaked, and a two-hour walk home.",
            "No, no, wait... Great. Of course. Of course that happened.",
        ],
        "In this scene I missed the bus, so I'll say something disappointed.",
        "fourth_wall",
    ),
    _a(
        "cat_returns",
        "BasicEvent",
        "Your cat, missing for three days, is sitting on the doorstep when you come home from "
        "work. You say:",
        -1.0,
        [
            "Oh, there you are. Where have you been, you silly thing? Come here.",
            "You had me worried sick, you know that? Three whole days. Come on, dinner time.",
        ],
        "Drops the bag, crouches down and scoops the cat up in both arms.",
        "stage_direction",
    ),
)

# Prompts written for the real recordings; the clips are the replies.
REAL_ARCHETYPE_SCENARIOS: tuple[ArchetypeScenario, ...] = (
    ArchetypeScenario(
        "parlour_reader", "SocialIdentity",
        "You are a retired schoolmaster reading a Regency novel aloud to your neighbours. You "
        "reach the passage on the selfish half-brother of the heroines. You say:", -0.5,
        real_group="librivox"),
    ArchetypeScenario(
        "card_dealer", "DailyOccupation",
        "You are a dealer at a late-night card table. The players wait while you deal a new "
        "round and call out each card. You say:", 0.0, real_group="cards"),
    ArchetypeScenario(
        "drill_sergeant", "DailyOccupation",
        "You are a drill sergeant on a muddy training field. A recruit has frozen in place and "
        "keeps asking what to do next. You say:", 0.5, real_group="drill"),
    ArchetypeScenario(
        "bingo_caller", "DailyOccupation",
        "You are the bingo caller at a village hall on a Friday night. The players have their "
        "cards ready for the next numbers. You say:", 0.0, real_group="bingo"),
    ArchetypeScenario(
        "cinema_technician", "DailyOccupation",
        "You are a sound technician checking the surround speakers of a cinema an hour before a "
        "premiere. You say:", 0.0, real_group="alsa"),
    ArchetypeScenario(
        "sister_phone_call", "RelativeRole",
        "You are an older sister. Your younger brother phones to say he is staying out with "
        "friends tonight instead of coming home. You say:", -0.5, real_group="official"),
)  # fmt: skip

# Vague replies that fit no role in particular: annotators split on Content Pass.
BORDERLINE_LINES: tuple[str, ...] = (
    "Well, that is certainly something. I suppose we will have to see what happens next.",
    "Okay. Right. Let me think about what I should say here.",
    "Hmm. I don't really know what to tell you, to be honest.",
    "That's interesting. Anyway, what were we talking about?",
    "Sure, sure. Whatever you think is best, I guess.",
    "Oh. Okay then. That's a lot to take in all at once.",
)

# Replies unrelated to every prompt: Content Pass fails for irrelevance.
IRRELEVANT_LINES: tuple[str, ...] = (
    "And now the weather: light showers in the north, clearing by the afternoon.",
    "Preheat the oven to two hundred degrees and grease a round cake tin.",
    "Please remember to update your password every ninety days.",
    "The museum is open from nine until five, except on public holidays.",
    "Turn left at the roundabout, then take the second exit towards the harbour.",
)


def _c(key, gender, age, style, profile, scene, negatives, swaps, transcripts=(), real_group="",
       recorded_arousal=0.0) -> Character:  # fmt: skip
    return Character(
        key, gender, age, style, profile, Scene(*scene), tuple(Scene(*n) for n in negatives),
        tuple(swaps), tuple(transcripts), real_group, recorded_arousal,
    )  # fmt: skip


CHARACTERS: dict[str, Character] = {c.key: c for c in (
    _c("marta", "F", "Adult", "Warm, Patient, Practical",
       "Marta Kowalczyk is a veteran midwife who has delivered babies on a busy city ward for "
       "twenty years. She is unflappable and motherly, and her humour is gentle and dry. She "
       "speaks slowly and softly to frightened people and never lets her own tiredness show. "
       "She has a faint Polish lilt.",
       ("Late on a night shift, Marta finds a first-time father pacing the corridor outside the "
        "delivery room and sits him down, calming him with quiet, steady reassurance.", -1.0),
       [("Marta reassures a nervous father, but the birth has gone badly wrong and doctors are "
         "rushing past; her calm words feel slightly out of step with the alarm around her.", 0.5),
        ("Marta is at a noisy retirement party in her honour, where colleagues expect a rousing "
         "farewell speech, and she answers with soft bedside reassurance.", 1.0),
        ("Marta is a contestant on a loud television quiz show, buzzing in during the lightning "
         "round, and whispers comforting words to no one in particular.", 1.0)],
       ["ellen", "idris", "max"],
       ["Sit down for a minute, love. Everything is going exactly the way it should.",
        "Breathe with me. In, and out. She's strong, and so is the baby."]),
    _c("idris", "M", "Adult", "Commanding, Decisive, Brave",
       "Captain Idris Vane has commanded a fishing trawler in northern waters for most of his "
       "life. He is blunt and fearless, and his crew trusts him completely. In a crisis his voice "
       "becomes loud, clipped and urgent; ashore he says very little. He has a rough coastal "
       "accent.",
       ("A storm hits the trawler at night. Idris shouts orders over the wind as waves break "
        "across the deck and the crew scrambles to secure the gear.", 1.0),
       [("The storm has already passed and the sea is calming; Idris still barks orders as if "
         "the worst were ahead, which feels a little overstated.", 0.5),
        ("On a calm, sunny morning in the harbour, Idris chats with tourists about the boat, "
         "yet shouts his lines as if a gale were blowing.", 0.0),
        ("Idris sits in a silent library reading room, leafing through a book of poems, and "
         "suddenly bellows storm orders at the shelves.", -1.0)],
       ["nadia", "hal", "anselm"],
       ["Reef the mainsail and lash everything down! Nobody goes below until I say so!",
        "Hold that wheel steady, Tomas! We ride this one out together!"]),
    _c("pip", "M", "Teenager", "Cheeky, Restless, Curious",
       "Pip Hollow is a fifteen-year-old errand boy in a smoky steam-powered city. He lives by "
       "his wits and talks fast, grinning his way out of trouble. He is curious about every "
       "locked door and cannot sit still. His voice is young, quick and full of mischief.",
       ("Pip tries to talk his way past a bored guard at the gate of the clockmakers' guild, "
        "pretending to deliver bread while peering at the machines inside.", 0.5),
       [("Pip chats with the guard, but the guard is an old friend who would let him in anyway, "
         "so the sly sales patter is a little unnecessary.", 0.0),
        ("Pip stands before a stern judge at his own trial for theft, and his cheeky patter "
         "about fresh bread clashes with the gravity of the courtroom.", -0.5),
        ("Pip is a grieving mourner at a quiet funeral, standing by the grave, and delivers his "
         "cheerful bread-seller patter to the silent crowd.", -1.0)],
       ["zoe", "sam", "walt"],
       ["Me? Sneaking? I'm delivering bread, sir. Smell that? Fresh this morning.",
        "Come on, just five minutes inside. I'll be out before you can count to a hundred."]),
    _c("evelyn", "F", "Adult", "Analytical, Reserved, Precise",
       "Dr Evelyn Shaw is a forensic scientist who trusts measurements over impressions. She is "
       "polite but distant, chooses words carefully and rarely raises her voice. She becomes "
       "quietly firm when detectives push her to guess. She speaks with a neutral, educated "
       "accent.",
       ("A detective presses Evelyn for a quick answer about fibres found at a crime scene. She "
        "explains her findings evenly and refuses to be hurried.", 0.0),
       [("Evelyn explains the fibre results to a friendly colleague who already agrees with "
         "her, so her firm insistence seems slightly more guarded than needed.", 0.0),
        ("Evelyn is at her best friend's wedding reception, raising a glass for a toast, and "
         "talks in the clipped tone of a lab report.", 1.0),
        ("Evelyn is riding a roller coaster at a theme park, screaming crowds all around, and "
         "calmly recites lab findings.", 1.0)],
       ["ellen", "cordelia", "rosa"],
       ["The fibres match the car's upholstery. That is not an opinion, it is a measurement.",
        "I'll need another hour with the samples before I sign anything."]),
    _c("walt", "M", "Elderly", "Gentle, Nostalgic, Humorous",
       "Walt Brennan is an eighty-year-old retired mechanic who loves telling stories about the "
       "old days. He is patient and affectionate, chuckles at his own jokes and speaks at an "
       "unhurried pace. His voice is warm and slightly gravelly, with a rural Midwestern "
       "accent.",
       ("On the porch on a summer evening, Walt tells his grandchildren about the first car he "
        "ever owned, smiling at the memory.", -0.5),
       [("Walt tells the car story to a grandchild who is clearly bored and wants to leave, so "
         "his relaxed pace feels slightly off for the moment.", 0.0),
        ("Walt is in a hospital waiting room, just told that his wife's surgery has "
         "complications, and cheerfully reminisces about old cars.", -1.0),
        ("Walt is a sprinter on the starting blocks of an Olympic final, seconds before the gun, "
         "telling slow stories about his first car.", 1.0)],
       ["anselm", "hal", "rosa"],
       ["That old car had no heater, so your grandmother and I drove to the dance in blankets.",
        "Back then a tank of petrol cost less than that fancy coffee of yours."]),
    _c("rosa", "F", "Young Adult", "Energetic, Optimistic, Talkative",
       "Rosa Delgado is a twenty-four-year-old who runs a fruit stall at a busy weekend market. "
       "She is cheerful, loud and endlessly chatty, and she knows every regular by name. She "
       "talks quickly and laughs often. She has a light Spanish accent.",
       ("At dawn on the busiest market day, Rosa sets out her fruit and calls out to the first "
        "shoppers, full of energy.", 1.0),
       [("Rosa calls out to shoppers at the end of a slow, rainy afternoon when almost no one is "
         "around, so her energy seems a touch too high.", 0.5),
        ("Rosa sits at a hospital bedside while her father sleeps after an operation, and "
         "calls out her market patter.", -1.0),
        ("Rosa stands silently in a candle-lit memorial vigil and suddenly starts shouting "
         "fruit prices.", -1.0)],
       ["max", "zoe", "anselm"],
       ["Fresh mangoes, sweetest in town! Try one, go on, the first taste is free!",
        "Good morning, good morning! Best day of the week, isn't it?"]),
    _c("hal", "M", "Adult", "Gruff, Weary, Sardonic",
       "Inspector Hal Brannock is a tired homicide detective near the end of his career. He is "
       "gruff and sardonic, speaks in low, flat tones and uses silence as a weapon. He rarely "
       "shows emotion but misses nothing. He has a gravelly big-city accent.",
       ("At three in the morning, Hal interrogates a suspect whose alibi keeps changing, leaning "
        "back in his chair and letting the silences do the work.", -0.5),
       [("Hal questions a witness who is cooperating fully, yet he uses the same weary, "
         "suspicious tone, which feels slightly harsh.", -0.5),
        ("Hal is hosting his granddaughter's birthday party, surrounded by balloons and "
         "children, and speaks to them like a murder suspect.", 1.0),
        ("Hal is the lead singer of a pop band on stage at a summer festival, addressing the "
         "cheering crowd in his interrogation-room drawl.", 1.0)],
       ["idris", "evelyn", "rosa"],
       ["You've told me that story three times now. It gets worse every time.",
        "Sit. We've got all night, and frankly, I've got nowhere better to be."]),
    _c("cordelia", "F", "Elderly", "Haughty, Witty, Proud",
       "Lady Cordelia Ashby is a seventy-year-old aristocrat who hosts garden parties at her "
       "country estate. She is proud, sharp-witted and cutting, and she never loses her "
       "composure. She speaks in a crisp, upper-class English accent with perfect diction.",
       ("At her summer garden party, a nervous guest spills red wine on Cordelia's white roses. "
        "She responds with icy, elegant sarcasm.", 0.0),
       [("The guest who spills the wine is Cordelia's oldest friend, so her icy sarcasm seems "
         "slightly colder than the moment calls for.", 0.0),
        ("Cordelia is trapped in a lift that has stopped between floors, the lights "
         "flickering, and speaks as if hosting tea on the lawn.", 1.0),
        ("Cordelia is a coach shouting instructions at a muddy rugby match in the pouring rain, "
         "delivering her drawing-room witticisms.", 1.0)],
       ["evelyn", "marta", "pip"],
       ["Oh, do not trouble yourself. That rug has survived far clumsier guests than you.",
        "How delightful. Red wine, on the white roses. Very modern."]),
    _c("sam", "M", "Young Adult", "Nervous, Earnest, Kind",
       "Sam Okafor is a twenty-two-year-old baker's assistant who taught himself to program. He "
       "is kind and sincere, but he gets nervous with strangers and rushes his words. He "
       "apologises too often and his voice wavers when he is anxious. He has a soft London "
       "accent.",
       ("Sam sits in his first job interview at a software company, trying to explain how much "
        "the job means to him while his nerves get the better of him.", 0.0),
       [("The interview is only an informal chat with a friendly manager who has already "
         "decided to hire him, so his nerves seem slightly overdone.", 0.0),
        ("Sam is the best man giving a wedding speech to a laughing crowd that wants jokes, and "
         "he delivers anxious job-interview pleading.", 1.0),
        ("Sam is a fighter pilot radioing his squadron in the middle of a dogfight, and "
         "nervously talks about teaching himself to code.", 1.0)],
       ["pip", "marta", "idris"],
       ["Sorry, I'm a bit nervous. But I really, really want this job.",
        "I, um, I taught myself to code at night, after my shifts at the bakery."]),
    _c("nadia", "F", "Adult", "Fierce, Loyal, Protective",
       "Nadia Reyes leads a firefighting crew and would walk through fire, quite literally, for "
       "any of them. She is fierce, direct and protective, and she gives orders in short bursts "
       "without hesitation. Her voice is strong and urgent under pressure. She has a Texan "
       "accent.",
       ("Inside a burning warehouse, with part of the roof already down, Nadia orders her crew "
        "out and turns back for a missing colleague.", 1.0),
       [("The warehouse fire is almost out and the crew is already safe; Nadia still shouts as "
         "if the roof were falling, which seems a bit much.", 0.5),
        ("Nadia is at a calm fire-safety class for primary-school children, and she screams "
         "evacuation orders at them.", 0.0),
        ("Nadia is lying on a beach towel at a quiet seaside resort, sunbathing, and suddenly "
         "yells about going back for Danny.", -1.0)],
       ["idris", "walt", "marta"],
       ["Everyone out the east door, now! I'm going back for Danny!",
        "Stay behind me and keep low. I am not leaving anyone in here."]),
    _c("anselm", "M", "Elderly", "Serene, Wise, Soft-spoken",
       "Brother Anselm is an elderly monk who tends the garden of a mountain monastery. He is "
       "serene and wise, speaks rarely and always softly, and leaves long pauses between "
       "thoughts. His voice is low and calm, with no noticeable accent.",
       ("A grieving visitor sits alone in the monastery garden. Anselm joins them on the bench "
        "and offers a few quiet words of comfort.", -1.0),
       [("The visitor in the garden is only mildly sad about a small disappointment, so "
         "Anselm's deep solemnity is a little heavier than needed.", -0.5),
        ("Anselm is refereeing a tense, noisy village football match, whistling fouls, and "
         "offers his gentle words on grief.", 1.0),
        ("Anselm is an auctioneer in a frantic, crowded auction room, racing through bids, and "
         "whispers about grief and patience.", 1.0)],
       ["walt", "evelyn", "max"],
       ["Grief is only love with nowhere to go. Sit a while, the garden is patient.",
        "There is no hurry here. Say nothing, if nothing is what you need."]),
    _c("zoe", "F", "Teenager", "Sarcastic, Bored, Clever",
       "Zoe Lin is a sixteen-year-old who would rather be anywhere than on a family holiday. She "
       "is sharp and clever and hides her feelings behind deadpan sarcasm, drawling her words "
       "with theatrical boredom. She has a standard American accent.",
       ("Stuck in the back seat on the fourth hour of a family road trip through farmland, Zoe "
        "comments on the view in a flat, sarcastic drawl.", -0.5),
       [("The family has just stopped at a lake that Zoe secretly likes, so her bored sarcasm "
         "sounds a little forced.", 0.0),
        ("Zoe is receiving a national science prize on stage, expected to give an excited "
         "thank-you speech, and drawls about cows and fields.", 1.0),
        ("Zoe is a news anchor breaking urgent live news of an earthquake, and sarcastically "
         "complains about the road trip.", 1.0)],
       ["pip", "cordelia", "marta"],
       ["Wow, another field. With cows. Truly the highlight of my summer.",
        "Are we there yet? No, seriously, I'm asking for my mental health."]),
    _c("max", "M", "Adult", "Flamboyant, Confident, Showy",
       "Max Ferro is the host of a glitzy prime-time game show. He is flamboyant and supremely "
       "confident, stretches every pause for suspense and loves the sound of his own voice. He "
       "speaks loudly, with big swoops of pitch. He has a polished American television accent.",
       ("In the final round of the show, under the studio lights, Max builds suspense before "
        "revealing what is behind the last door.", 1.0),
       [("It is only a dress rehearsal with an empty studio, so Max's full showmanship is a "
         "little more than the moment needs.", 0.5),
        ("Max is at a quiet parent-teacher meeting about his son's grades, and announces his "
         "lines like a game-show climax.", 0.0),
        ("Max is sitting in a dentist's chair with his mouth half numb, whispering to the "
         "nurse, and delivers booming game-show suspense.", -1.0)],
       ["rosa", "hal", "anselm"],
       ["Ladies and gentlemen, behind door number three... could it be the car?",
        "You've got ten seconds and one question left! Are you feeling lucky?"]),
    _c("ellen", "F", "Adult", "Calm, Professional, Reassuring",
       "Ellen Price is a senior air traffic controller known for staying calm in emergencies. "
       "She is professional and reassuring, speaks in an even rhythm, and keeps instructions "
       "short and clear. Her voice is level and warm, with a neutral Midwestern accent.",
       ("A trainee pilot panics on a first solo landing. From the tower, Ellen talks the pilot "
        "down step by step in a calm, even voice.", -0.5),
       [("The trainee is flying perfectly well and asks only a routine question, so Ellen's "
         "careful emergency tone seems slightly more serious than needed.", 0.0),
        ("Ellen is cheering her daughter at a school sports day, the crowd roaring, and speaks "
         "in her flat tower radio voice.", 1.0),
        ("Ellen is dancing at a crowded nightclub at two in the morning, music blasting, and "
         "recites landing instructions to the dancers.", 1.0)],
       ["marta", "nadia", "zoe"],
       ["Cessna four two bravo, you're doing fine. Reduce speed and turn left, heading two "
        "seven zero.",
        "The runway is clear. Just keep the nose level and let her settle."]),
    # --- characters given to the real recordings
    _c("arthur", "M", "Adult", "Measured, Dry, Observant",
       "Arthur Pembridge is a retired schoolmaster who reads Regency novels aloud to his "
       "neighbours every Thursday evening. He reads with measured, even pacing and lets the "
       "author's irony speak for itself. He is observant and dry, with a quiet, low voice and "
       "a mild English accent.",
       ("In a lamp-lit parlour, Arthur reads the opening chapter of a family novel, passing "
        "with quiet irony over a half-brother's excuses for his own meanness.", -0.5),
       [("Arthur reads the same passage to a restless group of teenagers who keep checking "
         "their phones, so his unhurried pace is slightly at odds with the room.", 0.0),
        ("Arthur is commentating a penalty shoot-out on live radio, the crowd screaming behind "
         "him, and reads out Regency prose.", 1.0),
        ("Arthur is shouting to rescuers from the top of a collapsing building and recites a "
         "quiet novel passage instead.", 1.0)],
       ["anselm", "max", "nadia"], real_group="librivox", recorded_arousal=-0.5),
    _c("lou", "M", "Adult", "Brisk, Unflappable, Matter-of-fact",
       "Lou Marchetti has dealt cards at the same casino for fifteen years. He is brisk and "
       "unflappable, calls every card plainly and never comments on the players' luck. His "
       "voice is flat and businesslike, with a faint New York accent.",
       ("Late in a long shift, Lou deals a fast round of cards, calling out each one plainly so "
        "the players at the table can follow.", 0.0),
       [("Lou calls the cards at a friendly kitchen-table game with his own family, where his "
         "casino briskness feels slightly stiff.", 0.5),
        ("Lou is reading a bedtime story to his small daughter, who wants funny voices, and "
         "calls out card names in his dealer's monotone.", -1.0),
        ("Lou is a sports commentator at the final whistle of a cup final, the crowd erupting, "
         "and flatly reads out playing cards.", 1.0)],
       ["hal", "walt", "max"], real_group="cards", recorded_arousal=0.0),
    _c("dale", "M", "Adult", "Plain-spoken, Impatient, Practical",
       "Sergeant Dale Burke trains new recruits and has little patience for hesitation. He is "
       "plain-spoken and practical and gives short directions without explanation. His voice is "
       "firm and clipped, with no noticeable accent.",
       ("On a muddy training field, Dale gives short directions to a recruit who keeps freezing "
        "in place and asking what to do next.", 0.5),
       [("The recruit is already moving confidently, so Dale's short, impatient directions "
         "sound slightly harsher than needed.", 0.5),
        ("Dale is gently guiding his elderly mother around a quiet garden centre, and gives "
         "her clipped field orders.", -0.5),
        ("Dale is a yoga teacher leading a slow, silent meditation class at sunrise, and "
         "snaps drill-field directions.", -1.0)],
       ["idris", "lou", "anselm"], real_group="drill", recorded_arousal=0.0),
    _c("ray", "M", "Adult", "Cheerful, Steady, Familiar",
       "Ray Tully has called the Friday bingo at the village hall for thirty years. He is "
       "cheerful and steady, reads the numbers at an even pace and knows everyone in the room. "
       "His voice is relaxed and friendly, with a regional English accent.",
       ("On Friday night at the village hall, Ray reads out the next numbers at an even pace so "
        "that the older players can keep up.", 0.0),
       [("It is the final, tense game of the night with a big prize at stake, and Ray's steady "
         "calling is a shade too relaxed for the mood.", 0.5),
        ("Ray is comforting a friend at a hospital bedside and reads numbers to him in his "
         "bingo rhythm.", -1.0),
        ("Ray is the pilot announcing an emergency landing to terrified passengers and calmly "
         "reads out bingo numbers.", 1.0)],
       ["lou", "walt", "zoe"], real_group="bingo", recorded_arousal=0.0),
    _c("hannah", "F", "Adult", "Clear, Methodical, Calm",
       "Hannah Lowe is a sound technician who installs cinema sound systems. She is methodical "
       "and calm, speaks in short, clear phrases and double-checks everything. Her voice is "
       "bright and even, with a neutral American accent.",
       ("An hour before a premiere, Hannah walks through the empty cinema checking each "
        "surround speaker and announcing which channel should be playing.", 0.0),
       [("Hannah tests the speakers while the audience is already taking its seats, so her "
         "slow, methodical checking feels slightly out of place.", 0.5),
        ("Hannah is at her sister's tearful farewell at the airport, and calls out speaker "
         "channels in her test voice.", -1.0),
        ("Hannah is cheering in the front row of a rock concert and announces speaker channels "
         "like a calibration test.", 1.0)],
       ["ellen", "evelyn", "nadia"], real_group="alsa", recorded_arousal=0.0),
    _c("jess", "F", "Teenager", "Warm, Wistful, Gentle",
       "Jess is a seventeen-year-old who has looked after her younger brother since their "
       "parents started working abroad. She is warm and gentle, hides her own loneliness to "
       "keep him happy and speaks softly, with small hesitations. She has a standard American "
       "accent.",
       ("Jess answers her brother's call; he wants to stay out with friends tonight. She lets "
        "him go cheerfully, though her voice catches when she admits she misses him.", -0.5),
       [("Her brother is only going out for an hour, so the catch in Jess's voice is slightly "
         "more wistful than the moment calls for.", -0.5),
        ("Jess is phoning a pizza place to order dinner and speaks with tender, wistful "
         "hesitation.", 0.0),
        ("Jess is coaching a shouting crowd of cheerleaders at a championship, and speaks with "
         "soft, wistful hesitation.", 1.0)],
       ["zoe", "marta", "idris"], real_group="official", recorded_arousal=-0.5),
)}  # fmt: skip


def character_for_group(group: str) -> Character:
    """The character written for the real-speech group ``group``."""
    for character in CHARACTERS.values():
        if character.real_group == group:
            return character
    raise KeyError(f"no demo character for real-speech group {group!r}")


def real_archetype_scenario(group: str) -> ArchetypeScenario:
    """The archetype prompt written for the real-speech group ``group``."""
    for scenario in REAL_ARCHETYPE_SCENARIOS:
        if scenario.real_group == group:
            return scenario
    raise KeyError(f"no archetype prompt for real-speech group {group!r}")
