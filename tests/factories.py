"""factory-boy factories for the catalogue, shared by every app's tests."""

from __future__ import annotations

import functools

import factory
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group

from core.permissions import ANNOTATORS, MAINTAINERS
from problems.models import Problem, Solution
from problems.services import code_sha256


@functools.cache
def _pw_hashed_with(hashers: tuple[str, ...]) -> str:
    return make_password("pw")  # by the first of `hashers`, the settings' list in force


def _pw() -> str:
    """Every factory user's password, "pw", hashed as the product hashes it (PBKDF2, Django's
    default): once a process for each hasher list in force, not once a user. One hash is 0.37 s
    of CPU (tests/api and tests/web without browsers: 109 -> 63 CPU-s)."""
    return _pw_hashed_with(tuple(settings.PASSWORD_HASHERS))


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.LazyFunction(_pw)


def maintainer(username: str = "maint") -> object:
    user = UserFactory(username=username)
    user.groups.add(Group.objects.get_or_create(name=MAINTAINERS)[0])
    return user


def annotator(username: str = "anno") -> object:
    user = UserFactory(username=username)
    user.groups.add(Group.objects.get_or_create(name=ANNOTATORS)[0])
    return user


class ProblemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Problem

    source = "test"
    pid = factory.Sequence(lambda n: f"test/p{n}")
    title = factory.Sequence(lambda n: f"Problem {n}")
    statement = "Read two integers $a$ and $b$ and print $a+b$."
    platform = "test"
    time_limit_ms = 1000
    memory_limit_mb = 256
    samples = factory.LazyFunction(lambda: [{"input": "1 2\n", "output": "3\n"}])


class SolutionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Solution

    problem = factory.SubFactory(ProblemFactory)
    role = Solution.Role.ORACLE
    language = "python3"
    code = "a, b = map(int, input().split())\nprint(a + b)\n"
    code_sha256 = factory.LazyAttribute(lambda o: code_sha256(o.code))
    source = "test"
    reliability = 1
    gold_verdict = Solution.GoldVerdict.AC
