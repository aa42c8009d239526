-- upgrade: rolling
-- CMMC: CAGE codes never use the letters I and O (decision 31), and further CAGE codes get a
-- database check too. 0017 allowed I and O in compliance_profiles.cage_code and checked nothing
-- in additional_cage_codes.
--
-- Not a check constraint: even NOT VALID, a check constraint is evaluated on every update of a
-- row, so a profile saved earlier with such a code could no longer change status (the renewal
-- sweep, the SPRS confirmation) and one bad row would fail the daily sweep. These triggers refuse
-- a code only where it is written: a new profile, or an update that changes the codes. Profiles
-- saved before keep their codes until an owner corrects them in Scope, which names the invalid
-- code (the app refuses to save Scope or confirm SPRS until then).
--
-- Rolling-safe: it adds a function and two triggers (no table rewrite, short lock). Every valid
-- write of an older replica goes through; only a CAGE code with I or O, which a replica from
-- before decision 31 would still accept, is refused (an error instead of an invalid code stored).
create function compliance_profiles_cage_codes_check() returns trigger language plpgsql as $$
declare
  bad text;
begin
  if new.cage_code is null or new.cage_code !~ '^[0-9A-HJ-NP-Z]{5}$' then
    raise exception 'compliance_profiles: CAGE code % is not valid (5 letters or digits, never I or O)', new.cage_code using errcode = 'check_violation';
  end if;
  select c into bad from unnest(new.additional_cage_codes) as c where c is null or c !~ '^[0-9A-HJ-NP-Z]{5}$' limit 1;
  if found then
    raise exception 'compliance_profiles: further CAGE code % is not valid (5 letters or digits, never I or O)', bad using errcode = 'check_violation';
  end if;
  return new;
end $$;

create trigger compliance_profiles_cage_codes_insert before insert on compliance_profiles
  for each row execute function compliance_profiles_cage_codes_check();
create trigger compliance_profiles_cage_codes_update before update of cage_code, additional_cage_codes on compliance_profiles
  for each row when (new.cage_code is distinct from old.cage_code or new.additional_cage_codes is distinct from old.additional_cage_codes)
  execute function compliance_profiles_cage_codes_check();
