@agent:clinic
Feature: Not written yet
