"""Example documents built in code: one of every step kind, expectation and event action."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from desktop_app.core.models import (
    ActionKind,
    AgentStep,
    AssertStep,
    BoundingBox,
    CallStep,
    CheckStep,
    ClickStep,
    DesktopClickStep,
    DesktopTypeStep,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    Event,
    Experience,
    ExtractStep,
    FillStep,
    Fingerprint,
    ForEachStep,
    GotoStep,
    HotkeyStep,
    IfStep,
    ImageVisible,
    ItemScope,
    ListItems,
    Locator,
    LocatorStrategy,
    Modifier,
    Observation,
    PageItems,
    Parameter,
    ParameterType,
    Point,
    PressStep,
    RepeatUntilStep,
    Resolution,
    Run,
    RunStatus,
    RunStep,
    ScrollDelta,
    ScrollStep,
    SecretPlaceholder,
    SelectStep,
    StepStatus,
    Target,
    TextPresent,
    TitleMatches,
    Trajectory,
    TrajectoryKind,
    TryStep,
    UrlMatches,
    ValueCompare,
    WaitForStep,
    WindowTitleMatches,
    Workflow,
    mask_parameters,
)

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SHOT = "a" * 64 + ".webp"
ANCHOR = "b" * 64 + ".png"


def target(label: str, *, password: bool = False) -> Target:
    """A target with a label locator, a CSS fallback and a fingerprint."""
    attrs = {"id": label.lower().replace(" ", "-")}
    if password:
        attrs["type"] = "password"
    return Target(
        locators=(
            Locator(strategy=LocatorStrategy.LABEL, value=label),
            Locator(strategy=LocatorStrategy.CSS, value=f"#{attrs['id']}"),
        ),
        fingerprint=Fingerprint(
            tag="input",
            role="textbox",
            name=label,
            attributes=attrs,
            bbox=BoundingBox(x=10, y=20, width=200, height=30),
            nearby_text=(label, "Sign in"),
            ancestors=("form#login", "div.row"),
        ),
    )


def button(name: str) -> Target:
    """A button found by role and name."""
    return Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name=name),))


def full_workflow(name: str = "Everything", description: str = "Uses every step kind.") -> Workflow:
    """A workflow with one step of every kind and one expectation of every kind."""
    return Workflow(
        name=name,
        description=description,
        domains=("app.example.test",),
        parameters=(
            Parameter(name="user", type=ParameterType.EMAIL, description="Who signs in"),
            Parameter(name="password", type=ParameterType.SECRET),
            Parameter(
                name="plan", type=ParameterType.CHOICE, choices=("free", "pro"), default="free"
            ),
            Parameter(name="seats", type=ParameterType.NUMBER, default=3),
            Parameter(name="start", type=ParameterType.DATE, required=False),
            Parameter(name="agree", type=ParameterType.BOOL, default=True),
            Parameter(name="note", type=ParameterType.TEXT, default=""),
            Parameter(name="teammates", type=ParameterType.LIST, required=False),
        ),
        intent_template="Sign {user} up for the {plan} plan",
        steps=(
            GotoStep(
                title="Open the sign-up page",
                url="https://app.example.test/signup?plan={plan}",
                expectations=(UrlMatches(pattern="https://app.example.test/signup*"),),
            ),
            FillStep(title="Fill 'Email' with {user}", target=target("Email"), value="{user}"),
            FillStep(
                title="Fill 'Password'",
                target=target("Password", password=True),
                value="{password}",
            ),
            SelectStep(title="Choose {plan}", target=target("Plan"), value="{plan}"),
            CheckStep(title="Agree to the terms", target=target("I agree"), checked=True),
            PressStep(title="Press Tab", key="Tab"),
            ScrollStep(title="Scroll to the summary", dy=400),
            WaitForStep(title="Wait for the summary", condition=TextPresent(text="Summary")),
            AssertStep(
                title="The price is shown",
                condition=ElementVisible(
                    target=Target(
                        locators=(Locator(strategy=LocatorStrategy.TEST_ID, value="price"),)
                    )
                ),
            ),
            ExtractStep(
                title="Read the price",
                target=Target(locators=(Locator(strategy=LocatorStrategy.TEST_ID, value="price"),)),
                variable="price",
                pattern=r"\d+",
            ),
            ClickStep(
                title="Click 'Sign up'",
                target=button("Sign up"),
                irreversible=True,
                screenshot=SHOT,
                source_events=(7, 8),
                expectations=(
                    TitleMatches(text="Welcome"),
                    ElementHidden(target=button("Sign up")),
                    TextPresent(text="You pay {price}"),
                ),
            ),
            CallStep(
                title="Invite the team", workflow_id="invite-team", arguments={"email": "{user}"}
            ),
            AgentStep(
                title="Pick the cheapest add-on",
                instruction="Pick the cheapest add-on",
                output_variable="addon",
            ),
            DesktopClickStep(
                title="Click OK in the installer",
                window_title="Installer",
                point=Point(x=120, y=80),
                target=Target(
                    locators=(Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value=ANCHOR),)
                ),
                expectations=(
                    WindowTitleMatches(pattern="Installer*"),
                    ImageVisible(anchor=ANCHOR),
                ),
            ),
            DesktopTypeStep(title="Type the note", window_title="Notes", text="{note} {addon}"),
            HotkeyStep(title="Save", keys=("ctrl", "s"), optional=True),
            IfStep(
                title="If the coupon field is there",
                condition=ElementPresent(target=target("Coupon")),
                steps=(FillStep(title="Fill 'Coupon'", target=target("Coupon"), value="WELCOME"),),
                otherwise=(
                    AssertStep(
                        title="The plan is free",
                        condition=ValueCompare(value="{plan}", op="equals", to="free"),
                    ),
                ),
            ),
            ForEachStep(
                title="Invite each teammate",
                over=ListItems(value="{teammates}"),
                item="mate",
                steps=(
                    FillStep(
                        title="Fill 'Invite' with {mate}", target=target("Invite"), value="{mate}"
                    ),
                ),
            ),
            ForEachStep(
                title="Remind each unpaid invoice",
                over=PageItems(
                    css="tr", contains="Unpaid", key="td.number", fields={"amount": "td.amount"}
                ),
                item="invoice",
                confirm="once",
                steps=(
                    ClickStep(
                        title="Remind {invoice} of {amount}",
                        target=Target(
                            locators=(
                                Locator(
                                    strategy=LocatorStrategy.ROLE,
                                    value="button",
                                    name="Remind",
                                    within=ItemScope(css="tr", text="{invoice}"),
                                ),
                            )
                        ),
                        irreversible=True,
                    ),
                ),
            ),
            RepeatUntilStep(
                title="Load every page",
                condition=TextPresent(text="No more results"),
                max_rounds=5,
                steps=(ClickStep(title="Click 'Load more'", target=button("Load more")),),
            ),
            TryStep(
                title="Try the express checkout",
                steps=(ClickStep(title="Click 'Express'", target=button("Express")),),
                otherwise=(ClickStep(title="Click 'Checkout'", target=button("Checkout")),),
            ),
        ),
    )


def full_trajectory() -> Trajectory:
    """A trajectory with one event of every action kind, observations, and a secret."""
    events = []
    for i, action in enumerate(ActionKind):
        at = T0 + timedelta(seconds=i)
        events.append(
            Event(
                action=action,
                at=at,
                ended_at=at + timedelta(milliseconds=300),
                target=target("Password", password=True)
                if action is ActionKind.FILL
                else target("Email"),
                value=SecretPlaceholder(label="Password") if action is ActionKind.FILL else "x",
                url="https://app.example.test/" if action is ActionKind.NAVIGATE else None,
                typed=True if action is ActionKind.NAVIGATE else None,
                key="Enter" if action is ActionKind.PRESS else None,
                modifiers=(Modifier.CONTROL,) if action is ActionKind.HOTKEY else (),
                point=Point(x=5, y=6) if action is ActionKind.DESKTOP_CLICK else None,
                scroll=ScrollDelta(dy=300) if action is ActionKind.SCROLL else None,
                files=("report.pdf",) if action is ActionKind.UPLOAD else (),
                tab="tab-1",
                before=Observation(at=at, url="https://app.example.test/", title="App"),
                after=Observation(
                    url="https://app.example.test/next",
                    title="Next",
                    aria_snapshot='- button "Next" [ref=e3]',
                    screenshot=SHOT,
                    window_title="App — Chromium",
                ),
            )
        )
    return Trajectory(
        intent="Sign ann@example.test up for the pro plan",
        kind=TrajectoryKind.WEB,
        start_url="https://app.example.test/",
        started_at=T0,
        ended_at=T0 + timedelta(minutes=1),
        recorder="tests",
        events=tuple(events),
    )


def run_for(workflow: Workflow) -> Run:
    """A finished run of *workflow* with masked secrets and one healed step."""
    values = {"user": "ann@example.test", "password": "hunter2", "plan": "pro"}
    return Run(
        workflow_id=workflow.id,
        workflow_version=workflow.version,
        status=RunStatus.SUCCEEDED,
        parameters=mask_parameters(workflow, values),
        secret_parameters=("password",),
        started_at=T0,
        finished_at=T0 + timedelta(seconds=9),
        steps=(
            RunStep(
                index=0,
                step_id=workflow.steps[0].id,
                title=workflow.steps[0].title,
                status=StepStatus.SUCCEEDED,
                resolution=Resolution.NOT_NEEDED,
                started_at=T0,
                duration_ms=120.5,
            ),
            RunStep(
                index=1,
                step_id=workflow.steps[1].id,
                title=workflow.steps[1].title,
                status=StepStatus.SUCCEEDED,
                resolution=Resolution.LLM,
                locator=Locator(strategy=LocatorStrategy.CSS, value="#mail"),
                started_at=T0,
                duration_ms=2400,
                llm_calls=1,
                prompt_tokens=900,
                completion_tokens=40,
                screenshot=SHOT,
            ),
        ),
    )


def experience_for(workflow: Workflow) -> Experience:
    """A remembered repair of the second step of *workflow*."""
    return Experience(
        workflow_id=workflow.id,
        workflow_version=workflow.version,
        step_id=workflow.steps[1].id,
        step_title=workflow.steps[1].title,
        step_kind="fill",
        page_url="https://app.example.test/signup",
        page_title="Sign up",
        failed_locators=(Locator(strategy=LocatorStrategy.LABEL, value="Email"),),
        repaired_locator=Locator(strategy=LocatorStrategy.LABEL, value="E-mail address"),
        resolution=Resolution.FINGERPRINT,
        reason="the label was renamed",
    )
