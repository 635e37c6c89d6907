"""Team (admins): who has which role, grant or remove one, and what a person did."""

import pandas as pd
import streamlit as st

from checkeval_core import team
from checkeval_core.textsafe import md_escape
from studio_ui.access import who
from studio_ui.frame import page_db
from studio_ui.widgets import confirm_step

st.title("Team")
db = page_db()
actor, role = who()
if actor is None:
    st.info("No login is configured: the app is a single-user tool and these roles are not "
            "checked yet. Prepare them here (or with `checkeval team add NAME --role ROLE`), "
            "then put the app behind a login (see docs/security.md, *Deploying for a team*).")
st.caption("Roles: " + " · ".join(f"**{r}** — {team.ROLE_TEXT[r]}" for r in team.ROLES))

people = team.members(db)
st.subheader("People")
if people:
    st.dataframe(pd.DataFrame(people), hide_index=True, width="stretch")
else:
    st.caption("Nobody has a role yet. The first admins come from CHECKEVAL_ADMINS "
               "(comma-separated) or `checkeval_admins` in the secrets file.")

st.subheader("Give a role")
with st.form("team_grant"):
    c1, c2 = st.columns(2)
    name = c1.text_input("Login name (verified email, else OIDC sub; or the proxy header)",
                         key="team_name")
    new_role = c2.selectbox("Role", list(team.ROLES), index=team.ROLES.index("annotator"),
                            key="team_role")
    if st.form_submit_button("Give role", type="primary"):
        try:
            team.grant(db, name, new_role)
            st.success(f"{md_escape(name.strip())} is now {new_role}.")
            st.rerun()
        except (ValueError, team.Denied) as e:
            st.error(md_escape(str(e)))

removable = [p["person"] for p in people if p["source"] == "team"]
if removable:
    st.subheader("Remove a role")
    gone = st.selectbox("Person", removable, key="team_remove_pick")
    pressed = st.button("Remove role", key="team_remove")
    if confirm_step("team_remove", pressed, gone,
                    f"Take {md_escape(gone)}'s role away? They then get nothing in this app "
                    "(the history keeps what they had).", "Confirm remove"):
        try:
            team.remove(db, gone)
            st.rerun()
        except (ValueError, team.Denied) as e:
            st.error(md_escape(str(e)))

st.subheader("What a person did")
everyone = sorted({p["person"] for p in people} | {h["person"] for h in team.history(db)})
if everyone:
    person = st.selectbox("Person", everyone, key="team_activity")
    done = team.activity(db, person)
    if done:
        st.dataframe(pd.DataFrame(done), hide_index=True, width="stretch")
    else:
        st.caption("No write recorded for this person (writes are recorded while the app runs "
                   "behind a login).")
    st.markdown("**Role history**")
    st.dataframe(pd.DataFrame(team.history(db, person)), hide_index=True, width="stretch")
