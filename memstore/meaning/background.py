"""Ordinary sentences on every kind of subject: what "unrelated" looks like to the embedding model.

e5's cosines sit in a narrow band, and how high that band lies depends on the question:
a short, general question is 0.8 from almost anything. Within a root, the pack of files
tells how far a file stands out from the rest of the root, but not whether any of them
answers at all: a root of Python notes has a "closest" file for "recipe for banana
bread" too. These sentences are the yardstick for that. A file counts as found by
meaning only when it is nearer the question than every one of these is (hybrid.py): a
memory that really answers is specific, and beats a sentence that merely shares the
subject; one that is just the least distant of a root that knows nothing of the matter
does not.

They are deliberately plain and spread thin over many subjects, so that none of them
answers a real question better than a real memory would. Changing them changes the
floor: measure (scripts/eval_locomo.py, tests/test_recall.py) before and after.
"""

from __future__ import annotations

SENTENCES: tuple[str, ...] = (
    "We had pasta for dinner and watched a film afterwards.",
    "The weather was cold and rainy most of the week.",
    "She bought new shoes at the shopping centre on Saturday.",
    "The train was late again this morning.",
    "He goes running in the park before work.",
    "Our flight to the coast leaves early on Friday.",
    "The children played football in the garden.",
    "I need to call the dentist to book an appointment.",
    "The cat sleeps on the sofa all afternoon.",
    "They painted the kitchen a pale shade of blue.",
    "The concert tickets sold out within an hour.",
    "My grandmother told stories about the old village.",
    "The bank charged a fee for the late payment.",
    "Prices at the supermarket went up this year.",
    "The team meeting was moved to Thursday afternoon.",
    "Please send the slides before the quarterly review.",
    "The contract has to be signed by both parties.",
    "The museum has a new exhibition of old maps.",
    "The river flooded the fields after the storm.",
    "Mountains in the north are covered in snow in winter.",
    "The election results were announced on the news.",
    "Students have exams at the end of the term.",
    "The novel follows a family across three generations.",
    "He practises the guitar every evening.",
    "The recipe calls for flour, butter and two eggs.",
    "The doctor said to rest and drink plenty of water.",
    "The car needs new tyres before the long drive.",
    "Scientists measured the temperature of the ocean.",
    "The history lecture covered the fall of an empire.",
    "The city is famous for its bridges and markets.",
    "The function returns an empty list when nothing matches.",
    "The build failed because a dependency was missing.",
    "We moved the database to a bigger server last month.",
    "The test suite takes ten minutes to run.",
    "Merge the branch after the review is approved.",
    "The service logs an error when the request times out.",
    "Update the configuration file and restart the process.",
    "The script reads a CSV file and writes a report.",
    "The password must be changed every ninety days.",
    "The website loads slowly on mobile phones.",
    "Keep the notes short and write down the date.",
    "The plan changed, so the earlier decision no longer holds.",
    "He felt tired but happy at the end of the day.",
    "The garden needs watering while we are away.",
    "The library closes early on public holidays.",
    "A new café opened around the corner.",
    "The phone battery runs out by the evening.",
    "They adopted a puppy from the animal shelter.",
)
