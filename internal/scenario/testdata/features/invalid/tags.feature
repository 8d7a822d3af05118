@env:production @retries:-1
Feature: Broken tags

  @repeat:0 @pass-rate:2 @timeout:soon @agnet:restaurant
  Scenario: bad parameters
    When the user says "hi"

  @pass-rate:0.5 @skp @Skip @ship
  Scenario: rate without repeat
    When the user says "hi"

  @repeat:99999999999 @retries:4294967296 @retries:2147483648
  Scenario: counts past what a suite takes
    When the user says "hi"

  # The parser splits at each @: the tags are "smoke," and "fast", and a
  # tag filter could select the scenario by neither "smoke," nor "a|b".
  @smoke,@fast @skip,@wip @a|b @x(1) @!y
  Scenario: tags no filter can select
    When the user says "hi"

  # Zero is no bound: 0s would wait for ever (or not at all), and a
  # pass rate of 0 passes whatever happens.
  @timeout:0s @within:0s @pass_rate:0 @repeat:5
  Scenario: zero bounds
    When the user says "hi"
