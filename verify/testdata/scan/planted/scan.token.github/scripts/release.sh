#!/bin/sh
export GH_TOKEN="${github_pat}"
