"""The library of site archetypes: vocabulary and flows that the UI patterns are built from.

An archetype is pure data. The procedural proposer composes its flows out of reusable UI
patterns (webworld.propose.patterns); adding a site type means adding one entry here.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

FlowKind = Literal[
    # catalog flows start on an item's detail page
    "purchase", "booking", "apply", "review", "save", "inquiry",
    # account / service flows start on the home page
    "signup", "settings", "support", "newsletter",
]
CATALOG_FLOWS: frozenset[str] = frozenset(
    {"purchase", "booking", "apply", "review", "save", "inquiry"}
)


@dataclass(frozen=True)
class Facet:
    """A choice with a finite list of options, e.g. ``Facet("Format", ("Hardcover", ...))``."""

    label: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Flow:
    """One task family: how it starts, where it ends, and how a user would say it.

    ``goal`` is an intent phrase; catalog flows may mention ``{item}``.
    """

    kind: FlowKind
    start: str
    terminal: str
    goal: str


@dataclass(frozen=True)
class Archetype:
    key: str
    title: str
    keywords: tuple[str, ...]
    brand_words: tuple[str, ...]
    entity: str
    entity_plural: str
    items: tuple[str, ...]
    categories: tuple[str, ...]
    queries: tuple[str, ...]
    option: Facet
    choice: Facet
    quantity: str
    flows: tuple[Flow, ...]
    info_pages: tuple[str, ...]
    toggles: tuple[str, ...]
    price_range: tuple[int, int] | None  # None: entries have no price (emails, articles)
    detail_fields: tuple[str, ...]


ARCHETYPES: dict[str, Archetype] = {}


def register(archetype: Archetype) -> Archetype:
    ARCHETYPES[archetype.key] = archetype
    return archetype


register(Archetype(
    key="shop",
    title="Online shop",
    keywords=("shop", "store", "bookstore", "books", "boutique", "retail", "buy", "market",
              "ecommerce", "e-commerce", "fashion", "clothing", "electronics", "gadgets"),
    brand_words=("Market", "Goods", "Corner", "Outlet", "Emporium", "Depot"),
    entity="product", entity_plural="products",
    items=("The Midnight Library", "Atomic Habits", "Project Hail Mary", "Dune",
           "Educated", "The Silent Patient", "Circe", "Sapiens"),
    categories=("Fiction", "Science", "History", "Biography", "Children"),
    queries=("bestsellers", "new releases", "award winners", "classics"),
    option=Facet("Format", ("Hardcover", "Paperback", "E-book")),
    choice=Facet("Payment method", ("Credit card", "PayPal", "Gift card")),
    quantity="Quantity",
    flows=(
        Flow("purchase", "Add to cart", "Order confirmed", "buy {item}"),
        Flow("save", "Add to wishlist", "Added to wishlist", "save {item} to your wishlist"),
        Flow("review", "Write a review", "Review published", "write a review of {item}"),
        Flow("signup", "Create account", "Welcome aboard", "create a customer account"),
        Flow("support", "Help", "Request received", "ask customer support for help"),
        Flow("newsletter", "Newsletter", "You are subscribed", "subscribe to the newsletter"),
        Flow("settings", "Sign in", "Preferences saved", "update your account preferences"),
    ),
    info_pages=("About us", "Shipping policy", "Returns", "FAQ", "Gift cards", "Careers",
                "Privacy policy", "Store locator"),
    toggles=("Order updates by email", "Personalised recommendations", "Weekly deals"),
    price_range=(8, 60),
    detail_fields=("Author", "Publisher", "Pages", "Rating"),
))

register(Archetype(
    key="flights",
    title="Flight booking",
    keywords=("flight", "flights", "airline", "air", "travel", "airfare", "plane", "trip"),
    brand_words=("Air", "Wings", "Skyways", "Jet", "Airlines", "Flyer"),
    entity="flight", entity_plural="flights",
    items=("Lisbon to Paris", "Boston to Chicago", "Tokyo to Seoul", "Madrid to Rome",
           "Denver to Seattle", "Berlin to Vienna", "Sydney to Auckland"),
    categories=("Europe", "North America", "Asia", "Oceania"),
    queries=("weekend getaways", "nonstop", "cheapest fares", "red-eye"),
    option=Facet("Cabin", ("Economy", "Premium economy", "Business")),
    choice=Facet("Seat preference", ("Window", "Aisle", "Middle")),
    quantity="Passengers",
    flows=(
        Flow("booking", "Select this flight", "Booking confirmed", "book the {item} flight"),
        Flow("save", "Track price", "Price alert set", "set a price alert for {item}"),
        Flow("inquiry", "Ask about this fare", "Question sent", "ask a question about {item}"),
        Flow("signup", "Join rewards", "Welcome to rewards", "join the rewards program"),
        Flow("support", "Help", "Request received", "contact the help desk"),
        Flow("settings", "Sign in", "Preferences saved", "update your travel preferences"),
        Flow("newsletter", "Deal alerts", "You are subscribed", "sign up for deal alerts"),
    ),
    info_pages=("Baggage rules", "Check-in", "Travel advisories", "About us", "FAQ",
                "Privacy policy", "Accessibility", "Careers"),
    toggles=("Gate change alerts", "Price drop emails", "Text message boarding pass"),
    price_range=(79, 890),
    detail_fields=("Departure", "Arrival", "Duration", "Stops"),
))

register(Archetype(
    key="hotel",
    title="Hotel booking",
    keywords=("hotel", "hotels", "stay", "lodging", "resort", "inn", "hostel", "vacation",
              "rental", "bnb", "accommodation"),
    brand_words=("Stays", "Inn", "Lodge", "Retreats", "Hotels", "Rooms"),
    entity="hotel", entity_plural="hotels",
    items=("Harbor View Hotel", "The Linden Inn", "Palm Court Resort", "Old Town Suites",
           "Riverside Lodge", "Grand Meridian", "Cedar Hill B&B"),
    categories=("City centre", "Beachfront", "Mountain", "Airport"),
    queries=("family friendly", "pet friendly", "spa", "free breakfast"),
    option=Facet("Room type", ("Standard double", "Deluxe king", "Family suite")),
    choice=Facet("Rate", ("Free cancellation", "Pay now and save", "Breakfast included")),
    quantity="Guests",
    flows=(
        Flow("booking", "Reserve", "Reservation confirmed", "book a room at {item}"),
        Flow("save", "Save to trips", "Saved to your trips", "save {item} to your trips"),
        Flow("review", "Write a review", "Review published", "review your stay at {item}"),
        Flow("inquiry", "Ask the property", "Question sent", "ask {item} a question"),
        Flow("signup", "Create account", "Welcome aboard", "create an account"),
        Flow("support", "Help", "Request received", "contact customer service"),
        Flow("settings", "Sign in", "Preferences saved", "change your account settings"),
    ),
    info_pages=("About us", "Cancellation policy", "FAQ", "Travel guides", "Partners",
                "Privacy policy", "Accessibility", "Gift cards"),
    toggles=("Booking reminders", "Member-only deals", "Trip recommendations"),
    price_range=(69, 420),
    detail_fields=("Neighbourhood", "Stars", "Check-in", "Guest rating"),
))


register(Archetype(
    key="bank",
    title="Online bank",
    keywords=("bank", "banking", "savings", "checking", "mortgage", "mortgages", "loan", "loans",
              "deposit", "finance", "fintech"),
    brand_words=("Bank", "Trust", "Savings", "Financial", "Capital", "Credit Union"),
    entity="product", entity_plural="products",
    items=("Everyday Checking", "High-Yield Savings", "12-Month Certificate of Deposit",
           "Cashback Rewards Card", "30-Year Fixed Mortgage", "Personal Loan",
           "Student Checking", "New Auto Loan"),
    categories=("Checking", "Savings", "Credit cards", "Loans", "Mortgages"),
    queries=("no monthly fee", "high interest", "low APR", "cashback"),
    option=Facet("Branch", ("Main Street", "Riverside", "Westgate")),
    choice=Facet("Account ownership", ("Individual", "Joint")),
    quantity="Attendees",
    flows=(
        Flow("apply", "Apply now", "Application received", "apply for the {item}"),
        Flow("booking", "Meet a banker", "Appointment booked",
             "book an appointment with a banker about the {item}"),
        Flow("save", "Compare", "Added to comparison", "add the {item} to your comparison list"),
        Flow("inquiry", "Request a callback", "Callback requested",
             "request a callback about the {item}"),
        Flow("signup", "Enroll in online banking", "Enrollment complete",
             "enroll in online banking"),
        Flow("settings", "Log in", "Alerts updated", "update your account alert settings"),
        Flow("support", "Contact us", "Secure message sent",
             "send a secure message to customer support"),
    ),
    info_pages=("Branch and ATM locator", "Rates", "Security center", "Fraud protection",
                "About us", "Privacy policy", "FAQ", "Careers", "Accessibility"),
    toggles=("Low balance alerts", "Paperless statements", "Large transaction alerts"),
    price_range=(0, 15),
    detail_fields=("Issuer", "Relationship agent", "Cut-off time", "Customer rating"),
))

register(Archetype(
    key="email",
    title="Email inbox",
    keywords=("email", "emails", "inbox", "mail", "mailbox", "webmail", "outbox",
              "correspondence"),
    brand_words=("Mail", "Post", "Inbox", "Letters", "Courier"),
    entity="message", entity_plural="messages",
    items=("Quarterly budget review", "Your itinerary for the Lisbon trip",
           "Team offsite next Friday", "Invoice #4821 is overdue", "Welcome to the book club",
           "Password reset request", "Dinner on Saturday?", "Draft contract for review"),
    categories=("Inbox", "Starred", "Sent", "Archive", "Promotions"),
    queries=("invoice", "meeting notes", "has attachment", "unread"),
    option=Facet("Meeting length", ("15 minutes", "30 minutes", "1 hour")),
    choice=Facet("Reply mode", ("Reply", "Reply all")),
    quantity="Attendees",
    flows=(
        Flow("inquiry", "Reply", "Reply sent", "reply to the email “{item}”"),
        Flow("save", "Move to folder", "Message moved",
             "file the email “{item}” into a folder"),
        Flow("booking", "Schedule a meeting", "Meeting scheduled",
             "schedule a meeting about the email “{item}”"),
        Flow("signup", "Create account", "Your inbox is ready", "create a new email account"),
        Flow("settings", "Sign in", "Settings saved", "change your mailbox settings"),
        Flow("support", "Help", "Request received", "contact email support"),
        Flow("newsletter", "Tips and updates", "You are subscribed",
             "subscribe to the tips and updates emails"),
    ),
    info_pages=("About us", "Privacy policy", "Security tips", "Storage plans",
                "Keyboard shortcuts", "Import contacts", "FAQ", "Terms of service",
                "Spam protection"),
    toggles=("Desktop notifications for new mail", "Conversation view", "Smart spam filter"),
    price_range=None,
    detail_fields=("From", "Received time", "Attachment size", "Importance rating"),
))

register(Archetype(
    key="forum",
    title="Discussion forum",
    keywords=("forum", "forums", "discussion", "discussions", "community", "threads",
              "bulletin", "hobbyist"),
    brand_words=("Forum", "Commons", "Boards", "Circle", "Collective"),
    entity="thread", entity_plural="threads",
    items=("Best budget mechanical keyboard this year?", "Sourdough starter not rising",
           "Show us your balcony garden", "Laptop fan is suddenly very loud",
           "Beginner marathon training plan", "What are you reading this month?",
           "Home server on a single-board computer", "Fixing a leaky kitchen faucet"),
    categories=("General discussion", "Tech support", "Hobbies", "Off-topic", "Announcements"),
    queries=("unanswered", "most replies", "solved", "this week"),
    option=Facet("Post type", ("Question", "Discussion", "Showcase")),
    choice=Facet("Visibility", ("Public", "Members only")),
    quantity="Votes",
    flows=(
        Flow("inquiry", "Reply to thread", "Reply posted", "reply to the thread “{item}”"),
        Flow("save", "Follow thread", "Thread followed", "follow the thread “{item}”"),
        Flow("review", "Rate this thread", "Rating posted", "rate the thread “{item}”"),
        Flow("signup", "Join the community", "Welcome to the forum", "register a forum account"),
        Flow("settings", "Log in", "Preferences saved", "update your forum preferences"),
        Flow("support", "Contact moderators", "Report sent", "contact the moderators"),
        Flow("newsletter", "Weekly digest", "Digest subscription confirmed",
             "subscribe to the weekly digest"),
    ),
    info_pages=("Community guidelines", "Moderation policy", "FAQ", "About us",
                "Privacy policy", "Member rankings", "Meetups near you", "Terms of use",
                "Badges"),
    toggles=("Email me when someone replies", "Show signatures", "Daily digest"),
    price_range=None,
    detail_fields=("Started by author", "Last reply time", "Community", "Thread rating"),
))

register(Archetype(
    key="recipes",
    title="Recipe collection",
    keywords=("recipe", "recipes", "cooking", "baking", "cookbook", "kitchen", "meals",
              "dinner", "vegetarian", "vegan", "culinary"),
    brand_words=("Kitchen", "Table", "Pantry", "Skillet", "Spoon"),
    entity="recipe", entity_plural="recipes",
    items=("Lemon garlic roast chicken", "Creamy mushroom risotto", "Classic banana bread",
           "Thai green curry", "Shakshuka with feta", "Overnight oats",
           "Beef and broccoli stir-fry", "Chocolate chip cookies"),
    categories=("Breakfast", "Weeknight dinners", "Desserts", "Vegetarian", "Soups and stews"),
    queries=("30-minute meals", "one-pot", "gluten-free", "meal prep"),
    option=Facet("Kit type", ("Classic", "Organic", "Vegetarian swap")),
    choice=Facet("Delivery slot", ("Morning", "Evening")),
    quantity="Servings",
    flows=(
        Flow("purchase", "Buy ingredient kit", "Order confirmed",
             "order the ingredient kit for {item}"),
        Flow("save", "Save recipe", "Saved to your recipe box", "save the {item} recipe"),
        Flow("review", "Rate this recipe", "Review published", "review the {item} recipe"),
        Flow("inquiry", "Ask the cook", "Question sent",
             "ask the author a question about the {item} recipe"),
        Flow("signup", "Join free", "Welcome to the kitchen", "create a free recipe account"),
        Flow("settings", "Sign in", "Preferences saved", "update your cooking preferences"),
        Flow("newsletter", "Weekly meal plan", "You are subscribed",
             "subscribe to the weekly meal plan email"),
    ),
    info_pages=("About us", "Cooking glossary", "Kitchen conversions", "Submit a recipe",
                "FAQ", "Privacy policy", "Meal planner", "Contact",
                "Farmers markets near you"),
    toggles=("Show metric measurements", "Hide recipes with nuts", "New recipe alerts"),
    price_range=(6, 35),
    detail_fields=("Author", "Cooking duration", "Serving size", "Rating"),
))

register(Archetype(
    key="jobs",
    title="Job board",
    keywords=("job", "jobs", "hiring", "careers", "recruitment", "vacancies", "employment",
              "resume", "internships", "recruiter", "staffing"),
    brand_words=("Jobs", "Careers", "Talent", "Hire", "Staffing"),
    entity="job", entity_plural="jobs",
    items=("Senior Data Analyst", "Registered Nurse, Night Shift", "Junior Frontend Developer",
           "Warehouse Team Lead", "Marketing Coordinator", "Dental Hygienist",
           "Customer Success Manager", "HVAC Technician"),
    categories=("Engineering", "Healthcare", "Sales and marketing", "Logistics", "Remote"),
    queries=("remote", "entry level", "part-time", "visa sponsorship"),
    option=Facet("Availability", ("Immediately", "Within 2 weeks", "Within a month")),
    choice=Facet("Work arrangement", ("On-site", "Hybrid", "Remote")),
    quantity="Openings",
    flows=(
        Flow("apply", "Apply now", "Application submitted", "apply for the {item} position"),
        Flow("save", "Save job", "Job saved", "save the {item} job"),
        Flow("inquiry", "Message the recruiter", "Message sent",
             "message the recruiter about the {item} role"),
        Flow("signup", "Create profile", "Profile created", "create a job seeker profile"),
        Flow("settings", "Sign in", "Preferences saved", "update your job alert settings"),
        Flow("support", "Help", "Request received", "contact the support team"),
        Flow("newsletter", "Career tips", "You are subscribed",
             "subscribe to the career tips newsletter"),
    ),
    info_pages=("Salary guide", "Resume tips", "Employers: post a job", "About us", "FAQ",
                "Privacy policy", "Jobs near you", "Career advice", "Terms of use"),
    toggles=("Job alerts by email", "Profile visible to recruiters", "Text message updates"),
    price_range=(18, 95),
    detail_fields=("Employer", "Recruiting agent", "Interview duration", "Employer rating"),
))

register(Archetype(
    key="real_estate",
    title="Real estate",
    keywords=("estate", "realty", "realtor", "property", "properties", "homes", "houses",
              "apartment", "apartments", "condos", "housing"),
    brand_words=("Realty", "Homes", "Properties", "Estates", "Real Estate"),
    entity="listing", entity_plural="listings",
    items=("3-bed colonial on Maple Street", "Downtown loft with skyline views",
           "2-bed condo near the park", "Renovated craftsman bungalow",
           "Lakefront cabin with dock", "Modern townhouse with garage",
           "Studio apartment in Midtown"),
    categories=("For sale", "For rent", "New construction", "Open houses", "Land"),
    queries=("3 bedrooms", "with garden", "garage", "walk to transit"),
    option=Facet("Tour type", ("In person", "Video tour", "Open house")),
    choice=Facet("Financing", ("Pre-approved", "Cash buyer")),
    quantity="Visitors",
    flows=(
        Flow("booking", "Schedule a tour", "Tour scheduled", "schedule a tour of the {item}"),
        Flow("inquiry", "Contact agent", "Message sent",
             "contact the listing agent about the {item}"),
        Flow("save", "Save home", "Saved to favourites", "save the {item} listing"),
        Flow("signup", "Sign up", "Account created", "create an account to track homes"),
        Flow("settings", "Sign in", "Preferences saved", "update your listing alert settings"),
        Flow("support", "Help", "Request received", "contact customer support"),
        Flow("newsletter", "Market report", "You are subscribed",
             "subscribe to the monthly market report"),
    ),
    info_pages=("Mortgage calculator", "Find an agent near you", "Buying guide",
                "Selling guide", "About us", "FAQ", "Privacy policy", "Fair housing notice",
                "Neighbourhood guides"),
    toggles=("New listing alerts", "Price change alerts", "Open house reminders"),
    price_range=(1100, 4500),
    detail_fields=("Listing agent", "Beds", "Open house time", "Neighbourhood rating"),
))

register(Archetype(
    key="food_delivery",
    title="Food delivery",
    keywords=("delivery", "takeout", "takeaway", "restaurant", "restaurants", "pizza", "sushi",
              "burgers", "food"),
    brand_words=("Eats", "Bites", "Dash", "To Go", "Express"),
    entity="restaurant", entity_plural="restaurants",
    items=("Golden Dragon Noodle House", "Luigi's Wood-Fired Pizza", "Sakura Sushi Bar",
           "The Burger Joint", "Green Bowl Salads", "Taqueria El Sol", "Bombay Spice Kitchen"),
    categories=("Pizza", "Asian", "Mexican", "Healthy", "Burgers", "Desserts"),
    queries=("free delivery", "open now", "under 30 minutes", "vegan options"),
    option=Facet("Meal deal", ("Combo for one", "Family bundle", "Chef's special")),
    choice=Facet("Payment", ("Card", "Cash on delivery")),
    quantity="Portions",
    flows=(
        Flow("purchase", "Add to basket", "Order placed", "order delivery from {item}"),
        Flow("review", "Rate restaurant", "Review published",
             "rate your last order from {item}"),
        Flow("save", "Add to favourites", "Added to favourites", "add {item} to your favourites"),
        Flow("signup", "Sign up", "Account created", "create a delivery account"),
        Flow("settings", "Log in", "Preferences saved", "update your notification settings"),
        Flow("support", "Help", "Request received", "report a problem with your order"),
        Flow("newsletter", "Promo codes", "You are subscribed",
             "sign up for promo code emails"),
    ),
    info_pages=("Become a courier", "Add your restaurant", "Delivery areas near you",
                "About us", "FAQ", "Privacy policy", "Gift cards", "Careers",
                "Allergen information"),
    toggles=("Order status notifications", "Promotional offers", "Save payment details"),
    price_range=(9, 45),
    detail_fields=("Operator", "Opening time", "Closing time", "Customer rating"),
))

register(Archetype(
    key="clinic",
    title="Clinic appointments",
    keywords=("clinic", "clinics", "doctor", "doctors", "medical", "health", "physician",
              "dentist", "appointment", "appointments", "telehealth", "pediatrics"),
    brand_words=("Health", "Medical", "Clinic", "Care", "Family Practice", "Medical Group"),
    entity="doctor", entity_plural="doctors",
    items=("Dr. Amelia Hart", "Dr. Samuel Okafor", "Dr. Lena Fischer", "Dr. Marco Silva",
           "Dr. Hannah Cole", "Dr. Yusuf Demir", "Dr. Grace Liu"),
    categories=("Family medicine", "Pediatrics", "Dermatology", "Cardiology", "Physiotherapy",
                "Dental care"),
    queries=("same-day appointments", "accepting new patients", "video visit",
             "weekend hours"),
    option=Facet("Visit type", ("New patient visit", "Follow-up", "Video consultation")),
    choice=Facet("Coverage", ("Insurance", "Self-pay")),
    quantity="Patients",
    flows=(
        Flow("booking", "Book appointment", "Appointment confirmed",
             "book an appointment with {item}"),
        Flow("apply", "Register as a new patient", "Registration received",
             "register as a new patient with {item}"),
        Flow("review", "Leave feedback", "Feedback submitted",
             "leave feedback about your visit with {item}"),
        Flow("save", "Add to my care team", "Added to your care team",
             "add {item} to your care team"),
        Flow("signup", "Patient portal sign-up", "Portal account created",
             "sign up for the patient portal"),
        Flow("settings", "Sign in", "Preferences saved", "update your patient portal settings"),
        Flow("support", "Contact us", "Message received", "contact the clinic front desk"),
    ),
    info_pages=("Find a clinic near you", "Insurance we accept", "Patient forms",
                "Visitor policy", "About us", "FAQ", "Privacy practices", "Billing",
                "Careers"),
    toggles=("Appointment reminders by text", "Lab result notifications", "Paperless billing"),
    price_range=(25, 250),
    detail_fields=("Practice", "First appointment time", "Last appointment time",
                   "Patient rating"),
))

register(Archetype(
    key="courses",
    title="Online courses",
    keywords=("course", "courses", "learning", "elearning", "mooc", "lessons", "tutorials",
              "academy", "bootcamp", "education", "study"),
    brand_words=("Academy", "Learning", "Institute", "School", "Campus"),
    entity="course", entity_plural="courses",
    items=("Intro to Python Programming", "Financial Accounting Basics",
           "UX Design Fundamentals", "Spanish for Beginners",
           "Data Visualization with Spreadsheets", "Public Speaking Essentials",
           "Digital Photography 101", "Project Management Foundations"),
    categories=("Programming", "Business", "Design", "Languages", "Personal development",
                "Photography"),
    queries=("beginner", "certificate", "self-paced", "free courses"),
    option=Facet("Track", ("Audit only", "Verified certificate", "Certificate with mentoring")),
    choice=Facet("Payment plan", ("Pay in full", "Monthly installments")),
    quantity="Seats",
    flows=(
        Flow("purchase", "Enroll now", "Enrollment confirmed", "enroll in {item}"),
        Flow("save", "Save for later", "Saved to your learning list",
             "save {item} to your learning list"),
        Flow("review", "Rate this course", "Review published", "write a review of {item}"),
        Flow("inquiry", "Ask the instructor", "Question sent",
             "ask the instructor of {item} a question"),
        Flow("signup", "Start learning free", "Welcome, learner", "create a learner account"),
        Flow("settings", "Log in", "Preferences saved", "update your learning preferences"),
        Flow("newsletter", "Course updates", "You are subscribed",
             "subscribe to course update emails"),
    ),
    info_pages=("For business", "Become an instructor", "Certificates", "Financial aid",
                "About us", "FAQ", "Privacy policy", "Accessibility", "Study groups near you"),
    toggles=("Weekly progress emails", "Study reminders", "Autoplay next lesson"),
    price_range=(19, 199),
    detail_fields=("Instructor", "Credits", "Duration", "Learner rating"),
))

register(Archetype(
    key="tickets",
    title="Event tickets",
    keywords=("tickets", "events", "concert", "concerts", "festival", "festivals", "theatre",
              "theater", "gigs", "showtimes", "comedy"),
    brand_words=("Tickets", "Live", "Box Office", "Stage", "Events"),
    entity="event", entity_plural="events",
    items=("Jazz Night at the Blue Room", "Summer Sounds Festival",
           "Hamlet at the Playhouse", "City FC vs Harbour United", "Stand-up Comedy Showcase",
           "Symphony Under the Stars", "Indie Rock Double Bill", "Food and Wine Expo"),
    categories=("Concerts", "Theatre", "Sports", "Comedy", "Festivals", "Family"),
    queries=("this weekend", "outdoor", "under $30", "all ages"),
    option=Facet("Seating", ("General admission", "Reserved seating", "VIP package")),
    choice=Facet("Ticket delivery", ("Mobile ticket", "Print at home", "Will call")),
    quantity="Tickets",
    flows=(
        Flow("purchase", "Buy tickets", "Tickets confirmed", "buy tickets for {item}"),
        Flow("booking", "Reserve seats", "Seats reserved",
             "reserve seats for a performance of {item}"),
        Flow("save", "Save event", "Event saved", "save {item} to your events"),
        Flow("signup", "Create account", "Account created", "create a fan account"),
        Flow("settings", "Sign in", "Preferences saved", "update your alert preferences"),
        Flow("support", "Help", "Request received", "contact fan support"),
        Flow("newsletter", "Presale alerts", "You are subscribed",
             "sign up for presale alert emails"),
    ),
    info_pages=("Venues near you", "Refund policy", "Accessibility", "Sell tickets",
                "Gift cards", "About us", "FAQ", "Privacy policy", "Fan-to-fan resale"),
    toggles=("Presale alerts", "Artist announcements", "Text message ticket reminders"),
    price_range=(25, 180),
    detail_fields=("Organiser", "Doors open time", "Start time", "Fan rating"),
))

register(Archetype(
    key="car_rental",
    title="Car rental",
    keywords=("car", "cars", "carhire", "vehicle", "vehicles", "suv", "minivan",
              "convertible", "roadtrip", "automobile"),
    brand_words=("Car Rental", "Wheels", "Auto Hire", "Motors", "Drive"),
    entity="car", entity_plural="cars",
    items=("Economy hatchback", "Compact sedan", "Midsize SUV", "7-seat minivan",
           "Electric compact", "Convertible roadster", "Full-size pickup", "Luxury sedan"),
    categories=("Economy", "SUVs", "Vans", "Electric", "Luxury"),
    queries=("airport pickup", "unlimited mileage", "automatic", "one-way"),
    option=Facet("Protection", ("Basic cover", "Standard cover", "Full protection")),
    choice=Facet("Key pickup", ("At the counter", "Contactless key box")),
    quantity="Drivers",
    flows=(
        Flow("booking", "Reserve this car", "Reservation confirmed", "reserve the {item}"),
        Flow("purchase", "Prepay and save", "Payment confirmed", "prepay for the {item}"),
        Flow("review", "Rate your rental", "Review published",
             "review your rental of the {item}"),
        Flow("inquiry", "Ask about this car", "Question sent",
             "ask a question about the {item}"),
        Flow("signup", "Join loyalty program", "Welcome to the club",
             "join the loyalty program"),
        Flow("settings", "Sign in", "Preferences saved", "update your rental preferences"),
        Flow("support", "Roadside help", "Request received", "contact roadside assistance"),
    ),
    info_pages=("Rental locations near you", "Rental requirements", "Insurance and protection",
                "Fuel policy", "One-way rentals", "About us", "FAQ", "Privacy policy",
                "Long-term leasing"),
    toggles=("Pickup reminders by text", "Receipts by email", "Member upgrade offers"),
    price_range=(29, 149),
    detail_fields=("Supplier", "Pickup time", "Luggage size", "Renter rating"),
))

register(Archetype(
    key="project_tracker",
    title="Project tracker",
    keywords=("project", "projects", "kanban", "sprint", "sprints", "bug", "bugs", "issues",
              "agile", "scrum", "backlog", "todo", "roadmap"),
    brand_words=("Boards", "Tasks", "Track", "Flow", "Projects"),
    entity="project", entity_plural="projects",
    items=("Website redesign", "Mobile app launch", "Q3 marketing campaign",
           "Data warehouse migration", "Customer onboarding revamp", "Office move",
           "API v2 rollout", "Annual security audit"),
    categories=("Engineering", "Marketing", "Operations", "Design", "Archived"),
    queries=("overdue", "assigned to me", "high priority", "due this week"),
    option=Facet("Role", ("Viewer", "Editor", "Admin")),
    choice=Facet("Access duration", ("Permanent", "30 days")),
    quantity="Seats",
    flows=(
        Flow("apply", "Request access", "Access requested",
             "request access to the {item} project"),
        Flow("save", "Watch project", "You are watching this project",
             "watch the {item} project"),
        Flow("inquiry", "Comment", "Comment posted", "post a comment on the {item} project"),
        Flow("signup", "Start free trial", "Workspace created", "create a new workspace"),
        Flow("settings", "Log in", "Preferences saved", "update your notification settings"),
        Flow("support", "Help", "Ticket submitted", "contact product support"),
        Flow("newsletter", "Product updates", "You are subscribed",
             "subscribe to product update emails"),
    ),
    info_pages=("Pricing", "Templates", "Integrations", "Changelog", "System status",
                "About us", "FAQ", "Privacy policy", "Security"),
    toggles=("Email me when I'm assigned", "Daily summary", "Mention notifications"),
    price_range=None,
    detail_fields=("Client", "Standup time", "Team size", "Health rating"),
))

register(Archetype(
    key="music",
    title="Music streaming",
    keywords=("music", "songs", "albums", "playlist", "playlists", "streaming", "artists",
              "radio", "podcast", "podcasts", "band", "bands"),
    brand_words=("Music", "Sound", "Beats", "Tunes", "Audio", "Records"),
    entity="album", entity_plural="albums",
    items=("Paper Moons by Ivy Lane", "Northern Static by The Halcyons",
           "Velvet Hours by Mara Quinn", "Low Tide Sessions by Coastline",
           "Golden Hour Radio by June and the Fields", "Concrete Garden by Tallboy",
           "Blue Season by The Wren Quartet"),
    categories=("Pop", "Rock", "Jazz", "Hip-hop", "Classical", "Electronic"),
    queries=("chill", "workout mix", "acoustic", "this week's releases"),
    option=Facet("Format", ("MP3 download", "Lossless download", "Vinyl LP")),
    choice=Facet("Payment method", ("Card", "Account credit")),
    quantity="Copies",
    flows=(
        Flow("purchase", "Buy album", "Purchase complete", "buy the album {item}"),
        Flow("save", "Add to library", "Added to your library", "add {item} to your library"),
        Flow("review", "Rate album", "Review published", "review the album {item}"),
        Flow("signup", "Sign up free", "Account created", "sign up for a listener account"),
        Flow("settings", "Log in", "Preferences saved", "change your playback settings"),
        Flow("support", "Help", "Request received", "contact listener support"),
        Flow("newsletter", "New music Friday", "You are subscribed",
             "subscribe to the new music newsletter"),
    ),
    info_pages=("For artists", "Premium plans", "Gift cards", "Supported devices", "About us",
                "FAQ", "Privacy policy", "Concerts near you", "Careers"),
    toggles=("Explicit content filter", "Crossfade between songs", "New release notifications"),
    price_range=(7, 35),
    detail_fields=("Artist", "Label", "Studio", "Listener rating"),
))

register(Archetype(
    key="news",
    title="News portal",
    keywords=("news", "newspaper", "headlines", "journalism", "magazine", "politics",
              "breaking", "editorial", "reporters", "gazette"),
    brand_words=("Times", "Herald", "Gazette", "Tribune", "Chronicle"),
    entity="article", entity_plural="articles",
    items=("City council approves new bike lanes", "Heatwave expected to break June records",
           "Local bakery wins national award", "School board votes on later start times",
           "Inside the race to restore the old harbour", "Transit fares to rise next spring",
           "Opinion: why libraries still matter"),
    categories=("Local", "Politics", "Business", "Science", "Sport", "Opinion"),
    queries=("election", "weather", "housing market", "transport"),
    option=Facet("Reprint format", ("Digital PDF", "Framed print", "Poster")),
    choice=Facet("Payment", ("Card", "Invoice")),
    quantity="Copies",
    flows=(
        Flow("save", "Save article", "Saved for later", "save the article “{item}” for later"),
        Flow("inquiry", "Report a correction", "Correction submitted",
             "report a correction for the article “{item}”"),
        Flow("review", "Rate this article", "Feedback sent", "rate the article “{item}”"),
        Flow("signup", "Create free account", "Account created", "create a free reader account"),
        Flow("settings", "Sign in", "Preferences saved", "update your alert preferences"),
        Flow("support", "Help", "Request received", "contact reader services"),
        Flow("newsletter", "Morning briefing", "You are subscribed",
             "sign up for the morning briefing newsletter"),
    ),
    info_pages=("About us", "Ethics policy", "Corrections", "Advertise",
                "Contact the newsroom", "Privacy policy", "Careers", "Local news near you",
                "Puzzles"),
    toggles=("Breaking news alerts", "Daily digest email", "Show comments"),
    price_range=None,
    detail_fields=("Author", "Publisher", "Published time", "Reader rating"),
))

register(Archetype(
    key="government_form",
    title="Government permits",
    keywords=("government", "permit", "permits", "licence", "license", "licensing", "council",
              "municipal", "passport", "civic", "citizen"),
    brand_words=("County Services", "City Hall", "Civic Portal", "Permits Office",
                 "Borough Council"),
    entity="permit", entity_plural="permits",
    items=("Residential parking permit", "Building permit", "Dog licence",
           "Street party permit", "Business licence", "Fishing licence",
           "Sidewalk cafe permit", "Yard sale permit"),
    categories=("Parking", "Building and planning", "Business", "Pets", "Events",
                "Recreation"),
    queries=("parking", "renovation", "food truck", "renewal"),
    option=Facet("Permit duration", ("1 month", "6 months", "12 months")),
    choice=Facet("Applying as", ("Individual", "Business")),
    quantity="Attendees",
    flows=(
        Flow("apply", "Start application", "Application submitted", "apply for a {item}"),
        Flow("booking", "Book an appointment", "Appointment booked",
             "book an in-person appointment about the {item}"),
        Flow("save", "Save for later", "Saved to your dashboard",
             "save the {item} application for later"),
        Flow("inquiry", "Ask a question", "Enquiry received",
             "ask the permits office about the {item}"),
        Flow("signup", "Create an account", "Account created", "register for a resident account"),
        Flow("settings", "Sign in", "Preferences saved", "update your notification preferences"),
        Flow("support", "Contact us", "Enquiry logged", "contact the service desk"),
    ),
    info_pages=("Fees and charges", "Processing times", "Required documents",
                "Find an office near you", "Accessibility statement", "About this service",
                "Privacy notice", "FAQ", "Translated guidance"),
    toggles=("Renewal reminders by email", "Application status texts", "Paper correspondence"),
    price_range=(15, 250),
    detail_fields=("Issuing office", "Counter opening time", "Counter closing time",
                   "Service rating"),
))

register(Archetype(
    key="library",
    title="Public library",
    keywords=("library", "libraries", "librarian", "catalogue", "borrow", "borrowing",
              "lending", "ebooks", "audiobooks", "reading", "literacy"),
    brand_words=("Library", "Public Library", "Reading Room", "Athenaeum", "Library District"),
    entity="book", entity_plural="books",
    items=("The Lighthouse Keeper's Daughter", "A Short History of Rivers",
           "Gardening for Small Spaces", "The Clockmaker's Apprentice",
           "Beginner's Guide to Watercolour", "Stars Over the Prairie", "Cooking on a Budget",
           "The Quiet Algorithm"),
    categories=("Fiction", "Non-fiction", "Children", "Large print", "Audiobooks", "Films"),
    queries=("new arrivals", "book club picks", "local history", "large print"),
    option=Facet("Pickup branch", ("Central Library", "Eastside Branch", "Hillcrest Branch")),
    choice=Facet("Notify me by", ("Email", "Text message")),
    quantity="Copies",
    flows=(
        Flow("apply", "Place a hold", "Hold placed", "place a hold on {item}"),
        Flow("save", "Add to reading list", "Added to your reading list",
             "add {item} to your reading list"),
        Flow("review", "Write a review", "Review posted", "write a review of {item}"),
        Flow("inquiry", "Ask a librarian", "Question sent", "ask a librarian about {item}"),
        Flow("signup", "Get a library card", "Library card issued", "apply for a library card"),
        Flow("settings", "Sign in", "Preferences saved", "update your account preferences"),
        Flow("newsletter", "Events newsletter", "You are subscribed",
             "subscribe to the library events newsletter"),
    ),
    info_pages=("Branch locator", "Opening hours", "Events calendar", "Study rooms",
                "Borrowing rules", "Interlibrary loan", "About us", "FAQ", "Privacy policy"),
    toggles=("Due date reminders", "Hold ready notifications", "Keep reading history"),
    price_range=None,
    detail_fields=("Author", "Publisher", "Pages", "Reader rating"),
))

register(Archetype(
    key="support_desk",
    title="Help desk",
    keywords=("helpdesk", "servicedesk", "support", "troubleshooting", "knowledgebase",
              "incident", "incidents", "itsm", "escalation"),
    brand_words=("Support", "Help Desk", "Service Desk", "Assist", "IT Services"),
    entity="article", entity_plural="help articles",
    items=("Reset your password", "Fix VPN connection drops", "Set up two-factor authentication",
           "Connect to the office printer", "Request a refund", "Update billing details",
           "Recover deleted files", "Configure email on your phone"),
    categories=("Account and login", "Billing", "Network", "Hardware", "Software"),
    queries=("password", "vpn", "refund", "printer"),
    option=Facet("Channel", ("Phone call", "Video call", "Remote desktop session")),
    choice=Facet("Urgency", ("Normal", "Critical")),
    quantity="Devices",
    flows=(
        Flow("inquiry", "Open a ticket", "Ticket created",
             "open a support ticket about “{item}”"),
        Flow("review", "Rate this article", "Feedback recorded",
             "rate the help article “{item}”"),
        Flow("save", "Follow article", "Following article",
             "follow updates to the article “{item}”"),
        Flow("booking", "Book a callback", "Callback scheduled",
             "schedule a callback about “{item}”"),
        Flow("signup", "Create account", "Account created", "register for the customer portal"),
        Flow("settings", "Sign in", "Preferences saved", "update your ticket notifications"),
        Flow("support", "Contact an agent", "Request received", "contact a support agent"),
    ),
    info_pages=("System status", "Service level agreement", "Known issues", "Release notes",
                "Contact us", "About us", "Privacy policy", "Remote support tools",
                "Walk-in IT centers near you"),
    toggles=("Email me ticket updates", "Text me about critical incidents",
             "Weekly ticket summary"),
    price_range=None,
    detail_fields=("Support agent", "Last updated time", "Product", "Helpfulness rating"),
))

register(Archetype(
    key="gym",
    title="Fitness studio",
    keywords=("gym", "gyms", "fitness", "workout", "workouts", "yoga", "pilates", "spinning",
              "trainer", "exercise"),
    brand_words=("Fitness", "Gym", "Athletics", "Studio", "Strength Club"),
    entity="class", entity_plural="classes",
    items=("Morning Vinyasa Yoga", "HIIT Express", "Spin and Sculpt", "Beginner Strength",
           "Mat Pilates", "Boxing Fundamentals", "Aqua Aerobics", "Mobility and Stretch"),
    categories=("Yoga", "Cycling", "Strength", "Cardio", "Mind and body", "Aquatics"),
    queries=("beginner friendly", "lunchtime", "low impact", "evening"),
    option=Facet("Location", ("Downtown club", "Riverside club", "Northgate club")),
    choice=Facet("Pass type", ("Single class", "10-class pack")),
    quantity="Spots",
    flows=(
        Flow("booking", "Book a spot", "Spot booked", "book a spot in {item}"),
        Flow("purchase", "Buy class pass", "Purchase complete", "buy a class pass for {item}"),
        Flow("review", "Rate class", "Review published", "rate the {item} class"),
        Flow("save", "Add to favourites", "Added to your favourites",
             "add {item} to your favourite classes"),
        Flow("signup", "Start free trial", "Welcome to the club",
             "start a free trial membership"),
        Flow("settings", "Member login", "Preferences saved", "update your member preferences"),
        Flow("support", "Help", "Request received", "ask the membership team for help"),
    ),
    info_pages=("Membership options", "Timetable", "Personal training", "Clubs near you",
                "Facilities", "About us", "FAQ", "Privacy policy", "Careers"),
    toggles=("Class reminders", "Waitlist alerts", "Monthly progress report"),
    price_range=(12, 35),
    detail_fields=("Instructor", "Start time", "End time", "Member rating"),
))

register(Archetype(
    key="pet_adoption",
    title="Pet adoption",
    keywords=("pet", "pets", "adopt", "adoption", "shelter", "rescue", "puppies", "kittens",
              "dogs", "cats", "animals"),
    brand_words=("Rescue", "Animal Shelter", "Paws", "Pet Rescue", "Adoptions"),
    entity="pet", entity_plural="pets",
    items=("Biscuit the beagle mix", "Luna the tabby kitten", "Rocco the boxer",
           "Mochi the lop-eared rabbit", "Juniper the senior collie",
           "Pip and Poppy the guinea pigs", "Shadow the black cat"),
    categories=("Dogs", "Cats", "Small animals", "Seniors", "Bonded pairs"),
    queries=("good with kids", "house trained", "low energy", "hypoallergenic"),
    option=Facet("Shelter location", ("Main shelter", "Eastside adoption center",
                                      "Foster home visit")),
    choice=Facet("Home type", ("House with yard", "Apartment")),
    quantity="Visitors",
    flows=(
        Flow("apply", "Adopt me", "Adoption application received", "apply to adopt {item}"),
        Flow("booking", "Schedule a meet and greet", "Visit scheduled",
             "schedule a meet and greet with {item}"),
        Flow("save", "Favourite", "Added to favourites", "add {item} to your favourites"),
        Flow("signup", "Sign up", "Account created", "create an adopter account"),
        Flow("settings", "Sign in", "Preferences saved", "update your alert preferences"),
        Flow("support", "Contact us", "Message received", "contact the shelter team"),
        Flow("newsletter", "Happy tails newsletter", "You are subscribed",
             "subscribe to the shelter newsletter"),
    ),
    info_pages=("Adoption process", "Adoption fees", "Foster a pet", "Volunteer", "Donate",
                "Lost and found", "About us", "FAQ", "Shelters near you"),
    toggles=("New arrival alerts", "Foster opportunity emails", "Event invitations"),
    price_range=(50, 350),
    detail_fields=("Shelter", "Foster host", "Meet and greet time", "Friendliness rating"),
))

register(Archetype(
    key="coworking",
    title="Coworking spaces",
    keywords=("coworking", "cowork", "workspace", "workspaces", "hotdesking", "office",
              "offices", "freelancers"),
    brand_words=("Works", "Commons", "Hub", "Spaces", "Collective"),
    entity="space", entity_plural="spaces",
    items=("Hot desk at Dockside", "Dedicated desk, Riverside", "4-person meeting room",
           "Private office for 6", "Podcast studio", "Event hall at the Old Mill",
           "Phone booth pod"),
    categories=("Hot desks", "Private offices", "Meeting rooms", "Event spaces", "Studios"),
    queries=("day pass", "near transit", "24/7 access", "with parking"),
    option=Facet("Duration", ("Half day", "Full day", "Full week")),
    choice=Facet("Billing", ("Pay now", "Monthly invoice")),
    quantity="People",
    flows=(
        Flow("booking", "Book this space", "Booking confirmed", "book the {item}"),
        Flow("purchase", "Buy a pass", "Pass purchased", "buy a pass for the {item}"),
        Flow("inquiry", "Request a tour", "Tour request sent", "request a tour of the {item}"),
        Flow("save", "Shortlist", "Added to shortlist", "shortlist the {item}"),
        Flow("signup", "Become a member", "Membership started", "become a member"),
        Flow("settings", "Member sign-in", "Preferences saved", "update your member settings"),
        Flow("support", "Help", "Request received", "contact the community team"),
    ),
    info_pages=("Locations near you", "Membership plans", "Amenities", "House rules",
                "For companies", "Events", "About us", "FAQ", "Privacy policy"),
    toggles=("Guest arrival notifications", "Booking reminders", "Community event invites"),
    price_range=(15, 120),
    detail_fields=("Community host", "Opening time", "Closing time", "Member rating"),
))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


@dataclass(frozen=True)
class ArchetypeMatch:
    archetype: Archetype
    exact: bool
    note: str


def match_archetype(theme: str) -> ArchetypeMatch:
    """The archetype whose keywords best match the theme; falls back to the closest by
    spelling, and says so."""
    words = _words(theme)
    best, best_score = None, 0.0
    for arch in ARCHETYPES.values():
        score = _score(words, arch)
        if score > best_score:
            best, best_score = arch, score
    if best is not None:
        return ArchetypeMatch(best, True, f"theme {theme!r} -> archetype {best.key!r}")
    closest = _closest_by_spelling(words)
    return ArchetypeMatch(
        closest,
        False,
        f"theme {theme!r} matches no archetype; using the closest, {closest.key!r} "
        f"({closest.title})",
    )


def _score(words: set[str], arch: Archetype) -> float:
    """Whole keywords count 1 (multi-word ones when all their words appear), title words
    0.5, and shared stems of 5+ letters ("bookstores" ~ "bookstore") 0.25."""
    score = sum(1.0 for k in arch.keywords if _words(k) and _words(k) <= words)
    score += 0.5 * len(words & _words(arch.title))
    stems = {w for k in arch.keywords for w in _words(k) if len(w) >= 5}
    score += 0.25 * sum(1 for w in words for k in stems
                        if len(w) >= 5 and w != k and (w.startswith(k) or k.startswith(w)))
    return score


def _closest_by_spelling(words: set[str]) -> Archetype:
    def similarity(arch: Archetype) -> float:
        keys = list(arch.keywords) + [arch.key]
        return max(
            (difflib.SequenceMatcher(None, w, k).ratio() for w in words for k in keys),
            default=0.0,
        )

    return max(sorted(ARCHETYPES.values(), key=lambda a: a.key), key=similarity)
